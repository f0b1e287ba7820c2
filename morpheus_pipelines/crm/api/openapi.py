"""The intake API's OpenAPI 3.1 document (``GET /openapi.json``, rendered at ``GET /docs``),
built from the request and answer models so the two cannot drift (docs/leads.md).

Every operation has an ``operationId`` and every answer it can give a schema: JSON for a
success, an RFC 9457 problem (``application/problem+json``, :class:`~.schemas.Problem`) for
any error, with the headers the service sends (``X-Request-Id`` on every answer,
``RateLimit-Policy`` and ``RateLimit`` on every ``/v1/`` one, ``Retry-After`` on a 429 or a
503, ``Location`` on a 201). The 201 of ``POST /v1/leads`` links to every operation that
takes the lead's id, so a client (and schemathesis' stateful phase) can follow it.

A new path is one entry of :func:`_paths`, made of the pieces below: :func:`_operation` for
the operation, :func:`_success` and :func:`_problems` for its answers.
"""

from __future__ import annotations

import functools
from http import HTTPStatus
from typing import Any

from pydantic import BaseModel

from morpheus_pipelines.crm.api.cursors import ACTIVITY_CURSOR, LEAD_CURSOR
from morpheus_pipelines.crm.api.dependencies import (
    IDEMPOTENCY_KEY_PATTERN,
    MAX_BODY_BYTES,
    MAX_IDEMPOTENCY_KEY_LENGTH,
)
from morpheus_pipelines.crm.api.guard import CALLER_REQUEST_ID
from morpheus_pipelines.crm.api.problems import PROBLEM_JSON
from morpheus_pipelines.crm.api.schemas import (
    JSON_SCHEMAS,
    NO_NUL,
    ActivityIn,
    ActivityOut,
    LeadIn,
    LeadOut,
    LeadPageOut,
    LeadPatchIn,
    LeadViewOut,
    MessageIn,
    MessageOut,
    OwnerOut,
    Problem,
    TimelineOut,
    WhatsAppWindowOut,
)

_MODELS: tuple[type[BaseModel], ...] = (
    LeadIn,
    LeadOut,
    LeadViewOut,
    LeadPageOut,
    LeadPatchIn,
    ActivityIn,
    ActivityOut,
    TimelineOut,
    WhatsAppWindowOut,
    MessageIn,
    MessageOut,
    Problem,
)

_ITEM = r'"[a-z-]+";{a}=[0-9]+;{b}=[0-9]+'
_HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-Id": {
        "description": "the caller's own X-Request-Id when it is 1 to 64 of A-Z a-z 0-9 . _ "
        ": -, else a new one; on every log line about the request",
        "schema": {"type": "string", "pattern": CALLER_REQUEST_ID},
    },
    "RateLimit-Policy": {
        "description": "the budgets (draft-ietf-httpapi-ratelimit-headers): requests per key "
        "a minute (api-key), failed authentications per client address a minute "
        "(auth-failures)",
        "schema": {
            "type": "string",
            "pattern": f"^{_ITEM.format(a='q', b='w')}(, {_ITEM.format(a='q', b='w')})*$",
            "examples": ['"api-key";q=6000;w=60, "auth-failures";q=30;w=60'],
        },
    },
    "RateLimit": {
        "description": "what each budget that counted this request has left (r) and the "
        "seconds until another unit comes back (t)",
        "schema": {
            "type": "string",
            "pattern": f"^{_ITEM.format(a='r', b='t')}(, {_ITEM.format(a='r', b='t')})*$",
            "examples": ['"api-key";r=5999;t=1'],
        },
    },
    "Retry-After": {
        "description": "seconds to wait before trying again",
        "schema": {"type": "integer", "minimum": 1},
    },
    "Location": {
        "description": "where the created resource is read",
        "schema": {"type": "string", "format": "uri-reference"},
    },
    "WWW-Authenticate": {"schema": {"type": "string", "const": "Bearer"}},
    "Idempotent-Replayed": {
        "description": "the answer is the original one, replayed",
        "schema": {"type": "string", "const": "true"},
    },
}

# What each error status means, for the operations that can answer it.
_MEANING = {
    400: "idempotency_key_required: the write needs an Idempotency-Key header",
    401: "missing_api_key or invalid_api_key: no key, or no active key matches",
    403: "forbidden: another subscription's data, whether or not it exists",
    408: "request_timeout: the body did not arrive in time (15 s)",
    413: f"body_too_large: the body is over {MAX_BODY_BYTES} bytes",
    422: "invalid_request (each field named in fields) or a refusal of the request's own",
    429: "rate_limited (the key's budget) or too_many_failed_authentications (the address's)",
    500: "internal_error: a fault of the service; quote request_id",
    503: "database_unavailable: nothing was written; retry",
}


def _ref(model: type[BaseModel] | str) -> dict[str, str]:
    name = model if isinstance(model, str) else model.__name__
    return {"$ref": f"#/components/schemas/{name}"}


def _headers(*names: str, v1: bool = True) -> dict[str, Any]:
    """The answer's headers: ``X-Request-Id`` always, the RateLimit fields under ``/v1/``;
    a name ending in ``?`` is sent on some of these answers only."""
    every = ("X-Request-Id", *(("RateLimit-Policy", "RateLimit") if v1 else ()), *names)
    headers: dict[str, Any] = {}
    for name in dict.fromkeys(every):
        if name.endswith("?"):
            headers[name[:-1]] = {**_HEADERS[name[:-1]], "required": False}
        else:
            headers[name] = {"$ref": f"#/components/headers/{name}"}
    return headers


def _success(
    description: str,
    model: type[BaseModel] | dict[str, Any] | None,
    *headers: str,
    v1: bool = True,
    links: dict[str, Any] | None = None,
    media_type: str = "application/json",
) -> dict[str, Any]:
    answer: dict[str, Any] = {"description": description, "headers": _headers(*headers, v1=v1)}
    if model is not None:
        schema = model if isinstance(model, dict) else _ref(model)
        answer["content"] = {media_type: {"schema": schema}}
    if links:
        answer["links"] = links
    return answer


def _problem(
    status: int, description: str | None = None, *, v1: bool = True, keyed: bool = True
) -> dict[str, Any]:
    headers = {
        401: ("WWW-Authenticate",) if keyed else (),
        429: ("Retry-After",),
        503: ("Retry-After",),
    }.get(status, ())
    return {
        "description": description or _MEANING.get(status) or HTTPStatus(status).phrase,
        "headers": _headers(*headers, v1=v1),
        "content": {PROBLEM_JSON: {"schema": _ref(Problem)}},
    }


def _problems(
    *statuses: int, v1: bool = True, keyed: bool = True, **described: str
) -> dict[str, Any]:
    """The error answers an operation can give: ``statuses`` with their usual meaning, and
    ``described`` (``_422="..."``) with its own; every ``/v1/`` operation can also answer
    401, 429 (its authentication, by key or signature), 500 and 503. ``keyed``: the 401 is an
    API key's (``WWW-Authenticate: Bearer``)."""
    answers = {
        str(status): _problem(status, v1=v1, keyed=keyed)
        for status in sorted({*statuses, *((401, 429) if v1 else ()), 500, 503})
    }
    for key, description in described.items():
        status = int(key.removeprefix("_"))
        answers[str(status)] = _problem(status, description, v1=v1, keyed=keyed)
    return answers


def _operation(
    operation_id: str,
    summary: str,
    responses: dict[str, Any],
    *,
    parameters: list[dict[str, Any]] | None = None,
    body: type[BaseModel] | dict[str, Any] | None = None,
    public: bool = False,
) -> dict[str, Any]:
    operation: dict[str, Any] = {"operationId": operation_id, "summary": summary}
    if public:
        operation["security"] = []
    if parameters:
        operation["parameters"] = parameters
    if body is not None:
        schema = body if isinstance(body, dict) else _ref(body)
        content = {"application/json": {"schema": schema}}
        operation["requestBody"] = {"required": True, "content": content}
    operation["responses"] = dict(sorted(responses.items()))
    return operation


def _query(name: str, schema: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    parameter = {"name": name, "in": "query", "required": False, "schema": schema}
    if description:
        parameter["description"] = description
    return parameter


_LEAD_ID = {
    "name": "lead_id",
    "in": "path",
    "required": True,
    "description": "a lead of the key's subscription (any other id: 403)",
    "schema": {"type": "string", "format": "uuid"},
    "example": "5b0c8d0e-4f1a-4e8e-9a53-0d7c7f1e2a33",
}
_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "1 to 200 visible ASCII characters, spaces only between them",
    "schema": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_IDEMPOTENCY_KEY_LENGTH,
        "pattern": IDEMPOTENCY_KEY_PATTERN,
    },
}
_PAGE_SIZE = {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}
_FREE_TEXT = {"type": "string", "pattern": NO_NUL}

# The operations that take a created lead's id, and how each gets it from the 201.
_FROM_CREATED_LEAD = "$response.body#/lead_id"
_LEAD_LINKS = {
    "GetLead": {"operationId": "getLead", "parameters": {"lead_id": _FROM_CREATED_LEAD}},
    "UpdateLead": {"operationId": "updateLead", "parameters": {"lead_id": _FROM_CREATED_LEAD}},
    "GetTimeline": {
        "operationId": "getLeadTimeline",
        "parameters": {"lead_id": _FROM_CREATED_LEAD},
    },
    "GetWhatsAppWindow": {
        "operationId": "getWhatsAppWindow",
        "parameters": {"lead_id": _FROM_CREATED_LEAD},
    },
    "QueueMessage": {
        "operationId": "queueMessage",
        "requestBody": {"lead_id": _FROM_CREATED_LEAD},
        "description": "the generated message's lead_id replaced by the created lead's",
    },
    "RecordActivity": {
        "operationId": "recordActivity",
        "requestBody": {
            "lead_id": _FROM_CREATED_LEAD,
            "subscription_id": "$request.body#/subscription_id",
        },
        "description": "the generated activity's lead_id and subscription_id the lead's",
    },
}

_HEALTH = {
    "type": "object",
    "required": ["status"],
    "properties": {"status": {"const": "ok"}},
    "additionalProperties": False,
}
_COUNT = {"type": "integer", "minimum": 0}
_WEBHOOK_SUMMARY = {
    "type": "object",
    "properties": {
        name: _COUNT
        for name in (
            "events",
            "new",
            "replayed",
            "applied",
            "pending",
            "ignored",
            "unknown_portal_events",
        )
    },
}
_HUBSPOT_EVENTS = {
    "type": "array",
    "minItems": 1,
    "maxItems": 100,
    "items": {
        "type": "object",
        "required": ["eventId", "portalId", "objectId", "subscriptionType", "occurredAt"],
    },
}
_SIGNATURE_HEADERS = [
    {
        "name": name,
        "in": "header",
        "required": True,
        "description": text,
        "schema": {"type": "string"},
    }
    for name, text in (
        ("X-HubSpot-Signature-v3", "base64 HMAC-SHA256 of method + URI + body + timestamp"),
        ("X-HubSpot-Request-Timestamp", "epoch milliseconds, at most 5 minutes old"),
    )
]


_META_VERIFICATION = [
    {"name": name, "in": "query", "required": True, "schema": {"type": "string"}}
    for name in ("hub.mode", "hub.verify_token", "hub.challenge")
]
_META_SIGNATURE = {
    "name": "X-Hub-Signature-256",
    "in": "header",
    "required": True,
    "description": "sha256= and the hex HMAC-SHA256 of the raw body, keyed by META_APP_SECRET",
    "schema": {"type": "string"},
}
_META_DELIVERY = {
    "type": "object",
    "required": ["entry"],
    "properties": {"object": {"type": "string"}, "entry": {"type": "array"}},
}
_META_SUMMARY = {
    "type": "object",
    "properties": {"received": {"type": "object", "additionalProperties": _COUNT}},
}
_SENDER_LEAD = {
    "type": "object",
    "properties": {
        "lead_id": {"type": "string", "format": "uuid"},
        "owner": {"anyOf": [_ref(OwnerOut), {"type": "null"}]},
        "owner_state": {"type": "string", "enum": ["assigned", "fallback", "waiting"]},
        "is_test": {"type": "boolean"},
    },
}
_GOOGLE_ADS_LEAD = {
    "type": "object",
    "required": ["google_key", "lead_id"],
    "properties": {
        "google_key": {"type": "string", "description": "the subscription's key"},
        "lead_id": {"type": "string"},
        "is_test": {"type": "boolean"},
        "user_column_data": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["column_id"],
                "properties": {
                    "column_id": {"type": "string"},
                    "string_value": {"type": "string"},
                    "column_name": {"type": "string"},
                },
            },
        },
        "campaign_id": {"type": "integer"},
        "form_id": {"type": "integer"},
        "adgroup_id": {"type": "integer"},
        "creative_id": {"type": "integer"},
        "gcl_id": {"type": "string"},
    },
}


def _paths() -> dict[str, Any]:
    """Every path of the API: one entry each."""
    return {
        "/v1/leads": {
            "post": _operation(
                "createLead",
                "Create a lead and its owner in one transaction",
                {
                    "201": _success(
                        "created, with its owner; Location is the lead",
                        LeadOut,
                        "Location",
                        links=_LEAD_LINKS,
                    ),
                    "200": _success(
                        "a repeated delivery: the original answer",
                        LeadOut,
                        "Idempotent-Replayed",
                        links=_LEAD_LINKS,
                    ),
                    **_problems(
                        403,
                        408,
                        413,
                        _422="invalid_request, or idempotency_key_reused (the key of an earlier "
                        "submission with another body; names its lead_id)",
                    ),
                },
                parameters=[_IDEMPOTENCY_KEY],
                body=LeadIn,
            ),
            "get": _operation(
                "listLeads",
                "The subscription's leads, newest first, in keyset pages",
                {
                    "200": _success("a page of leads", LeadPageOut),
                    **_problems(_422="invalid_request: a bad filter, limit or cursor, named"),
                },
                parameters=[
                    _query("status", {"enum": ["open", "won", "lost", "closed"]}),
                    _query("owner_state", {"enum": ["assigned", "fallback", "waiting"]}),
                    _query("source", _FREE_TEXT),
                    _query("source_submission_id", _FREE_TEXT),
                    _query("limit", _PAGE_SIZE),
                    _query(
                        "cursor",
                        {"type": "string", "pattern": LEAD_CURSOR},
                        "the next_cursor of the page before",
                    ),
                ],
            ),
        },
        "/v1/leads/{lead_id}": {
            "get": _operation(
                "getLead",
                "The lead with its owner and pool",
                {"200": _success("the lead", LeadViewOut), **_problems(403)},
                parameters=[_LEAD_ID],
            ),
            "patch": _operation(
                "updateLead",
                "Close the lead (status) or reassign it by hand (owner), or both",
                {
                    "200": _success("the lead as it is now", LeadViewOut),
                    **_problems(
                        403,
                        408,
                        413,
                        _422="invalid_request: an unknown status, an empty body or an unknown "
                        "field, or a rep who is inactive, of another subscription or without a "
                        "HubSpot owner (owner.sales_rep_id)",
                    ),
                },
                parameters=[_LEAD_ID],
                body=LeadPatchIn,
            ),
        },
        "/v1/leads/{lead_id}/timeline": {
            "get": _operation(
                "getLeadTimeline",
                "Every activity of the lead, every channel, newest first",
                {
                    "200": _success("a page of the timeline", TimelineOut),
                    **_problems(403, _422="invalid_request: a bad limit or cursor"),
                },
                parameters=[
                    _LEAD_ID,
                    _query("limit", _PAGE_SIZE),
                    _query(
                        "cursor",
                        {"type": "string", "pattern": ACTIVITY_CURSOR},
                        "the next_cursor of the page before",
                    ),
                ],
            ),
        },
        "/v1/leads/{lead_id}/whatsapp-window": {
            "get": _operation(
                "getWhatsAppWindow",
                "Whether a free-form WhatsApp message may be sent now, and until when",
                {"200": _success("the window", WhatsAppWindowOut), **_problems(403)},
                parameters=[_LEAD_ID],
            ),
        },
        "/v1/activities": {
            "post": _operation(
                "recordActivity",
                "Record an activity of any channel; idempotent on external_id",
                {
                    "201": _success(
                        "recorded; Location is the lead's timeline, which lists it (an "
                        "activity has no URL of its own)",
                        ActivityOut,
                        "Location",
                    ),
                    "200": _success(
                        "this external_id was already recorded with this body",
                        ActivityOut,
                        "Idempotent-Replayed",
                    ),
                    **_problems(
                        403,
                        408,
                        413,
                        _422="invalid_request (occurred_at in the future among them), or "
                        "external_id_reused (recorded with another body; names activity_id)",
                    ),
                },
                body=ActivityIn,
            ),
        },
        "/v1/messages": {
            "post": _operation(
                "queueMessage",
                "Queue an outbound message; free-form WhatsApp only inside the window, email "
                "never to a newsletter-opted-out address",
                {
                    "202": _success(
                        "queued (or, for a repeated key, the original, Idempotent-Replayed)",
                        MessageOut,
                        "Idempotent-Replayed?",
                    ),
                    **_problems(
                        400,
                        403,
                        408,
                        413,
                        _422="invalid_request, whatsapp_window_closed (with closed_at), "
                        "opted_out, or idempotency_key_reused; nothing queued",
                    ),
                },
                parameters=[_IDEMPOTENCY_KEY | {"required": True}],
                body=MessageIn,
            ),
        },
        "/v1/webhooks/hubspot": {
            "post": _operation(
                "receiveHubSpotWebhook",
                "HubSpot's webhook deliveries: each event stored and applied once",
                {
                    "200": _success(
                        "stored (or already stored) and the contact events applied",
                        _WEBHOOK_SUMMARY,
                    ),
                    **_problems(
                        408,
                        413,
                        keyed=False,
                        _401="no, a stale or a wrong signature; nothing stored (counted "
                        "against the address's budget of failed authentications)",
                        _422="invalid_request: not a list of 1 to 100 events; names the field",
                    ),
                },
                parameters=_SIGNATURE_HEADERS,
                body=_HUBSPOT_EVENTS,
                public=True,
            ),
        },
        "/v1/webhooks/meta": {
            "get": _operation(
                "verifyMetaWebhook",
                "Meta's verification handshake: the challenge back when the token is ours",
                {
                    "200": _success(
                        "the hub.challenge, as the body",
                        {"type": "string"},
                        media_type="text/plain",
                    ),
                    **_problems(_403="verification_refused: not subscribe, or not our token"),
                },
                parameters=_META_VERIFICATION,
                public=True,
            ),
            "post": _operation(
                "receiveMetaWebhook",
                "Meta's deliveries: Lead Ads leads (owned in the request, answers read "
                "afterwards), WhatsApp messages and statuses",
                {
                    "200": _success("what was done, by kind", _META_SUMMARY),
                    **_problems(
                        408,
                        413,
                        keyed=False,
                        _401="no or a wrong X-Hub-Signature-256; nothing stored (counted "
                        "against the address's budget of failed authentications)",
                        _422="invalid_request: not a delivery (no entry list); names the field",
                    ),
                },
                parameters=[_META_SIGNATURE],
                body=_META_DELIVERY,
                public=True,
            ),
        },
        "/v1/webhooks/google-ads": {
            "post": _operation(
                "receiveGoogleAdsLead",
                "A Google Ads lead-form delivery: the lead and its owner, in the request",
                {
                    "200": _success("the lead (a redelivery: the same lead)", _SENDER_LEAD),
                    **_problems(
                        408,
                        413,
                        keyed=False,
                        _401="unknown_google_key; nothing stored (counted against the "
                        "address's budget of failed authentications)",
                        _422="invalid_request: lead_id, is_test or a column; names the field",
                    ),
                },
                body=_GOOGLE_ADS_LEAD,
                public=True,
            ),
        },
        "/healthz": {
            "get": _operation(
                "getHealth",
                "200 when the database answers",
                {"200": _success("healthy", _HEALTH, v1=False), **_problems(v1=False)},
                public=True,
            ),
        },
        "/openapi.json": {
            "get": _operation(
                "getOpenApiDocument",
                "This document",
                {"200": _success("the OpenAPI document", {"type": "object"}, v1=False)},
                public=True,
            ),
        },
        "/docs": {
            "get": _operation(
                "getApiReference",
                "This document as an HTML page",
                {
                    "200": _success(
                        "the reference", {"type": "string"}, v1=False, media_type="text/html"
                    )
                },
                public=True,
            ),
        },
    }


@functools.cache
def openapi_document() -> dict[str, Any]:
    schemas: dict[str, Any] = dict(JSON_SCHEMAS)
    for model in _MODELS:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}", by_alias=True)
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    schemas["LeadIn"]["properties"]["payload"]["anyOf"] = [_ref("JsonObject"), {"type": "null"}]
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Morpheus lead intake",
            "version": "1",
            "description": "Leads, their timelines and their messages (docs/leads.md). Every "
            "error is an RFC 9457 problem whose error member is a stable code; every /v1/ "
            "answer says its budgets in RateLimit-Policy and RateLimit.",
        },
        "components": {
            "schemas": schemas,
            "headers": {name: {"required": True, **header} for name, header in _HEADERS.items()},
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"apiKey": []}],
        "paths": _paths(),
    }
