"""The intake API's OpenAPI 3.1 document, built from the request and answer models so the
two cannot drift (docs/leads.md; ``GET /openapi.json``)."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel

from morpheus_pipelines.crm.api.schemas import (
    ActivityIn,
    ActivityOut,
    ErrorOut,
    LeadIn,
    LeadOut,
    LeadPageOut,
    LeadPatchIn,
    LeadViewOut,
    MessageIn,
    MessageOut,
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
    ErrorOut,
)


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _json(model: type[BaseModel], description: str, **headers: str) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": _ref(model)}},
    }
    if headers:
        answer["headers"] = {
            name: {"description": text, "schema": {"type": "string"}}
            for name, text in headers.items()
        }
    return answer


_REFUSALS = {
    "401": _json(ErrorOut, "no or an unknown API key"),
    "403": _json(ErrorOut, "another subscription's data (whether or not it exists)"),
    "408": _json(ErrorOut, "the request head or body did not arrive in time"),
    "429": _json(
        ErrorOut,
        "the key's request budget, or the address's budget of failed authentications, is spent",
        **{"Retry-After": "seconds"},
    ),
    "431": _json(ErrorOut, "a request head over 16 KiB or 100 header fields"),
    "500": _json(ErrorOut, "a fault of the service; the answer names its request_id"),
    "503": _json(ErrorOut, "the database does not answer; nothing was written"),
}


_LEAD_ID = {
    "name": "lead_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "format": "uuid"},
}
_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
}
# Every message is a write a client may retry: its key is not optional.
_REQUIRED_IDEMPOTENCY_KEY = _IDEMPOTENCY_KEY | {"required": True}


_LIST_PARAMETERS = [
    *(
        {"name": name, "in": "query", "required": False, "schema": schema}
        for name, schema in (
            ("status", {"enum": ["open", "won", "lost", "closed"]}),
            ("owner_state", {"enum": ["assigned", "fallback", "waiting"]}),
            ("source", {"type": "string"}),
            ("source_submission_id", {"type": "string"}),
            ("limit", {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}),
            ("cursor", {"type": "string"}),
        )
    )
]


def _body(model: type[BaseModel]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(model)}}}


_TIMELINE_PATHS: dict[str, Any] = {
    "/v1/activities": {
        "post": {
            "summary": "Record an activity of any channel; idempotent on external_id",
            "requestBody": _body(ActivityIn),
            "responses": {
                "201": _json(ActivityOut, "recorded"),
                "200": _json(
                    ActivityOut,
                    "this external_id was already recorded with this body",
                    **{"Idempotent-Replayed": "true"},
                ),
                "413": _json(ErrorOut, "body larger than 64 KiB"),
                "422": _json(ErrorOut, "invalid fields, or an external_id reused"),
                **_REFUSALS,
            },
        }
    },
    "/v1/leads/{lead_id}/timeline": {
        "get": {
            "summary": "Every activity of the lead, every channel, newest first",
            "parameters": [
                _LEAD_ID,
                {
                    "name": "limit",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "integer", "minimum": 1, "maximum": 200},
                },
                {
                    "name": "cursor",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                },
            ],
            "responses": {
                "200": _json(TimelineOut, "a page of the timeline"),
                "422": _json(ErrorOut, "a bad limit or cursor"),
                **_REFUSALS,
            },
        }
    },
    "/v1/leads/{lead_id}/whatsapp-window": {
        "get": {
            "summary": "Whether a free-form WhatsApp message may be sent now, and until when",
            "parameters": [_LEAD_ID],
            "responses": {"200": _json(WhatsAppWindowOut, "the window"), **_REFUSALS},
        }
    },
    "/v1/messages": {
        "post": {
            "summary": "Queue an outbound message; free-form WhatsApp only inside the window, "
            "email never to a newsletter-opted-out address",
            "parameters": [_REQUIRED_IDEMPOTENCY_KEY],
            "requestBody": _body(MessageIn),
            "responses": {
                "202": _json(MessageOut, "queued (or, for a repeated key, the original)"),
                "400": _json(ErrorOut, "idempotency_key_required: no Idempotency-Key header"),
                "413": _json(ErrorOut, "body larger than 64 KiB"),
                "422": _json(
                    ErrorOut,
                    "invalid fields, whatsapp_window_closed, opted_out, or a reused key",
                ),
                **_REFUSALS,
            },
        }
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
_COUNT = {"type": "integer", "minimum": 0}
_WEBHOOK_PATHS: dict[str, Any] = {
    "/v1/webhooks/hubspot": {
        "post": {
            "summary": "HubSpot's webhook deliveries: each event stored and applied once",
            "security": [],
            "parameters": _SIGNATURE_HEADERS,
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": 100,
                            "items": {
                                "type": "object",
                                "required": [
                                    "eventId",
                                    "portalId",
                                    "objectId",
                                    "subscriptionType",
                                    "occurredAt",
                                ],
                            },
                        }
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "stored (or already stored) and the contact events applied",
                    "content": {
                        "application/json": {
                            "schema": {
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
                        }
                    },
                },
                "401": _json(ErrorOut, "no, a stale or a wrong signature; nothing stored"),
                "408": _REFUSALS["408"],
                "413": _json(ErrorOut, "body larger than 64 KiB"),
                "422": _json(ErrorOut, "not a list of 1 to 100 events; names the field"),
                "500": _REFUSALS["500"],
                "503": _REFUSALS["503"],
            },
        }
    },
}


@functools.cache
def openapi_document() -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for model in _MODELS:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return {
        "openapi": "3.1.0",
        "info": {"title": "Morpheus lead intake", "version": "1"},
        "components": {
            "schemas": schemas,
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"apiKey": []}],
        "paths": {
            "/v1/leads": {
                "post": {
                    "summary": "Create a lead and its owner in one transaction",
                    "parameters": [_IDEMPOTENCY_KEY],
                    "requestBody": _body(LeadIn),
                    "responses": {
                        "201": _json(LeadOut, "created, with its owner"),
                        "200": _json(
                            LeadOut,
                            "a repeated delivery: the original answer",
                            **{"Idempotent-Replayed": "true"},
                        ),
                        "413": _json(ErrorOut, "body larger than 64 KiB"),
                        "422": _json(ErrorOut, "invalid fields, or a reused idempotency key"),
                        **_REFUSALS,
                    },
                },
                "get": {
                    "operationId": "listLeads",
                    "summary": "The subscription's leads, newest first, in keyset pages",
                    "parameters": _LIST_PARAMETERS,
                    "responses": {
                        "200": _json(LeadPageOut, "a page of leads"),
                        "422": _json(ErrorOut, "a bad filter, limit or cursor, named"),
                        **_REFUSALS,
                    },
                },
            },
            "/v1/leads/{lead_id}": {
                "get": {
                    "operationId": "getLead",
                    "summary": "The lead with its owner and pool",
                    "parameters": [_LEAD_ID],
                    "responses": {"200": _json(LeadViewOut, "the lead"), **_REFUSALS},
                },
                "patch": {
                    "operationId": "updateLead",
                    "summary": "Close the lead (status) or reassign it by hand (owner), or both",
                    "parameters": [_LEAD_ID],
                    "requestBody": _body(LeadPatchIn),
                    "responses": {
                        "200": _json(LeadViewOut, "the lead as it is now"),
                        "413": _json(ErrorOut, "body larger than 64 KiB"),
                        "422": _json(
                            ErrorOut,
                            "an unknown status, an empty body or unknown field, or a rep who "
                            "is inactive, of another subscription or without a HubSpot owner",
                        ),
                        **_REFUSALS,
                    },
                },
            },
            **_TIMELINE_PATHS,
            **_WEBHOOK_PATHS,
            "/healthz": {
                "get": {
                    "summary": "200 when the database answers",
                    "security": [],
                    "responses": {
                        "200": {"description": "healthy"},
                        "503": _REFUSALS["503"],
                    },
                }
            },
        },
    }
