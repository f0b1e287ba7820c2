"""The JSON the intake API accepts and answers, and how a refusal names the field
(docs/leads.md).

The models are the OpenAPI document's schemas (:mod:`.openapi`), and the document says what
the service enforces, no more and no less: a schema-valid request is taken (unless stored
state or the clock refuses it: a reused key, a closed window, a time in the future) and any
other is refused. Where a rule is checked by the code rather than by pydantic (an email, a
phone number, an ``external_id`` the product keeps), the field's ``pattern`` in the document
is that rule written as a regular expression, and ``tests/intake/test_intake_fuzz.py`` holds
the two together. No text may hold NUL (``\\u0000``): PostgreSQL text cannot, and the body is
refused before it is parsed any further (:mod:`.body`).
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from morpheus_pipelines.crm.rules.timeline import RESERVED_EXTERNAL_ID_PREFIXES

# What Python's ``str.strip()`` and ``re``'s ``\s`` take for whitespace, spelled out: the
# engines that read the document (ECMA, Rust) each have a ``\s`` of their own.
_WS = r"\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Any text without NUL.
NO_NUL = r"^[^\x00]*$"
# Not empty, no leading or trailing blanks, no line break, no NUL.
TEXT = rf"^[^{_WS}\x00]([^\x00\n]*[^{_WS}\x00])?$"
DATE_TIME = {"format": "date-time", "examples": ["2026-12-01T09:30:00+08:00"]}


def _any_case(text: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else _escaped(c) for c in text)


def _escaped(character: str) -> str:
    return "\\" + character if character in r"\.^$|?*+()[]{}" else character


# crm/rules/timeline.py::check_caller_external_id as a pattern: not all ASCII digits, not a
# prefix the product keeps (in any case).
EXTERNAL_ID = (
    "^(?![0-9]+$)"
    + "".join(f"(?!{_any_case(prefix)})" for prefix in RESERVED_EXTERNAL_ID_PREFIXES)
    + TEXT[1:]
)
# crm/rules/lead_intake.py::normalise_email as a pattern: blank (no email), or, trimmed,
# lower-cased and without a leading ``mailto:``, ``local@domain.tld``.
_NOT_AT = rf"[^@{_WS}\x00]"
EMAIL = (
    rf"^[{_WS}]*((?:{_any_case('mailto:')})?{_NOT_AT}{{1,64}}@{_NOT_AT}+\.{_NOT_AT}{{2,}})?"
    rf"[{_WS}]*$"
)
# crm/rules/lead_intake.py::normalise_phone as a pattern: blank (no phone), or, with spaces,
# dashes, dots and brackets dropped and a leading 00 read as +, E.164.
_NOISE = rf"[{_WS}\-().]"
PHONE = rf"^([{_WS}]*|{_NOISE}*(\+|0{_NOISE}*0){_NOISE}*[1-9]({_NOISE}*[0-9]){{6,14}}{_NOISE}*)$"

Text = Annotated[str, Field(pattern=NO_NUL)]
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
Timestamps = Annotated[str | None, Field(json_schema_extra={"format": "date-time"})]


def _no_default(schema: dict[str, Any]) -> None:
    """An optional field that may not be null documents no ``null`` default."""
    schema.pop("default", None)


class ContactIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    email: str | None = Field(
        default=None,
        max_length=320,
        pattern=NO_NUL,
        json_schema_extra={"pattern": EMAIL, "examples": ["Ana@Example.com"]},
        description="checked by email-validator (syntax; no DNS) and stored lower-cased, its "
        "domain in IDNA (ASCII) form; blank is no email",
    )
    phone: str | None = Field(
        default=None,
        max_length=40,
        pattern=NO_NUL,
        json_schema_extra={"pattern": PHONE, "examples": ["+65 9123 4567"]},
        description="read by libphonenumber: with its country code, or national in the "
        "subscription's default region; a number not valid for its country is refused; stored "
        "as E.164, an extension apart; blank is no phone",
    )
    first_name: str | None = Field(default=None, max_length=200, pattern=NO_NUL)
    last_name: str | None = Field(default=None, max_length=200, pattern=NO_NUL)


class LeadIn(BaseModel):
    """``POST /v1/leads``."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {
                    "subscription_id": "0b3f8a52-3f0e-4d38-9c55-5b7c0c2f7a11",
                    "source": "web-form",
                    "source_submission_id": "f-1029",
                    "campaign_ids": ["spring-sale"],
                    "contact": {"email": "Ana@Example.com", "phone": "+65 9123 4567"},
                    "payload": {"page": "/pricing"},
                }
            ]
        },
    )

    subscription_id: uuid.UUID
    source: str = Field(min_length=1, max_length=100, pattern=TEXT)
    source_submission_id: str = Field(min_length=1, max_length=200, pattern=TEXT)
    campaign_ids: list[Text] = Field(default_factory=list, max_length=50)
    contact: ContactIn
    # The document's schema is JsonObject (openapi.py sets it: pydantic cannot refer to a
    # schema it did not make).
    payload: dict[str, Any] | None = Field(
        default=None,
        description="stored as given; no NUL in any text or key, at most 32 levels deep",
    )
    # The document says "empty" (maxLength 0), which is what is taken; the route refuses a
    # filled one itself so that the refusal is logged as a bot's.
    honeypot: str | None = Field(
        default=None,
        max_length=500,
        pattern=NO_NUL,
        json_schema_extra={"maxLength": 0},
        description="a browser form's field hidden from people: empty from a person; "
        "anything in it is a bot's, and the lead is refused (422) and not stored",
    )


class ActivityIn(BaseModel):
    """``POST /v1/activities``: one entry of a lead's timeline, from any channel."""

    model_config = ConfigDict(extra="forbid", strict=True)

    subscription_id: uuid.UUID
    external_id: str = Field(
        min_length=1,
        max_length=200,
        pattern=TEXT,
        json_schema_extra={"pattern": EXTERNAL_ID, "examples": ["wamid.HBgM1029"]},
        description="not all digits and not starting form:, dialer-call:, hubspot:, meta:, "
        "whatsapp:, google-ads: or message: (the product's own)",
    )
    channel: Literal["form", "whatsapp", "call", "email"]
    direction: Literal["inbound", "outbound"]
    lead_id: uuid.UUID
    occurred_at: str = Field(
        min_length=1,
        max_length=64,
        pattern=NO_NUL,
        description="RFC 3339, with its offset; not more than 5 minutes in the future",
        json_schema_extra=DATE_TIME,
    )
    subject: str | None = Field(default=None, max_length=500, pattern=NO_NUL)
    body: str | None = Field(default=None, max_length=20_000, pattern=NO_NUL)
    hubspot_owner_id: str | None = Field(
        default=None,
        max_length=40,
        pattern=NO_NUL,
        description="the rep who made an outbound touch",
    )


class ActivityOut(BaseModel):
    activity_id: int
    external_id: str
    lead_id: uuid.UUID | None
    channel: Literal["form", "whatsapp", "call", "email", "meeting", "note", "task"]
    direction: Literal["inbound", "outbound"] | None
    occurred_at: Timestamp
    subject: str | None
    body: str | None
    hubspot_owner_id: str | None


class TimelineOut(BaseModel):
    """Newest first; ``next_cursor`` fetches the next (older) page, ``null`` at the end."""

    items: list[ActivityOut]
    next_cursor: str | None


class WhatsAppWindowOut(BaseModel):
    open: bool
    opened_at: Timestamps
    closes_at: Timestamps
    remaining_seconds: int = Field(ge=0)


# A message needs the text its kind is sent with: a template its name, free-form its body.
_MESSAGE_KINDS = {
    "oneOf": [
        {"properties": {"kind": {"const": "template"}}, "required": ["template_name"]},
        {"properties": {"kind": {"const": "free_form"}}, "required": ["body"]},
    ]
}


class MessageIn(BaseModel):
    """``POST /v1/messages``: a free-form message needs ``body``, a template
    ``template_name``."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            **_MESSAGE_KINDS,
            "examples": [
                {
                    "lead_id": "5b0c8d0e-4f1a-4e8e-9a53-0d7c7f1e2a33",
                    "channel": "whatsapp",
                    "kind": "template",
                    "template_name": "follow_up_1",
                }
            ],
        },
    )

    lead_id: uuid.UUID
    channel: Literal["whatsapp", "email"]
    kind: Literal["free_form", "template"]
    # Optional, never null: a kind without its text is refused whatever else it has.
    template_name: str = Field(  # type: ignore[assignment]
        default=None, min_length=1, max_length=200, pattern=TEXT, json_schema_extra=_no_default
    )
    body: str = Field(  # type: ignore[assignment]
        default=None, min_length=1, max_length=4_096, pattern=NO_NUL, json_schema_extra=_no_default
    )


class MessageOut(BaseModel):
    message_id: uuid.UUID
    status: str


class OwnerOut(BaseModel):
    sales_rep_id: int | None
    hubspot_owner_id: str


OwnerState = Literal["assigned", "fallback", "waiting"]


class LeadOut(BaseModel):
    """The answer to a new lead (201) and, verbatim, to its duplicates (200)."""

    lead_id: uuid.UUID
    owner: OwnerOut | None = Field(description="null while the lead waits for an owner")
    pool: str
    owner_is_fallback: bool
    owner_state: OwnerState
    created_at: Timestamp


class OwnerChoiceIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    sales_rep_id: int = Field(ge=1, lt=2**63)


class LeadPatchIn(BaseModel):
    """``PATCH /v1/leads/{lead_id}``: close it, reassign it by hand, or both (reassigned
    first)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"minProperties": 1, "examples": [{"status": "won"}]},
    )

    status: Literal["won", "lost", "closed"] = Field(  # type: ignore[assignment]
        default=None, json_schema_extra=_no_default
    )
    owner: OwnerChoiceIn = Field(  # type: ignore[assignment]
        default=None,
        description="an active rep of the subscription with a HubSpot owner id",
        json_schema_extra=_no_default,
    )


class ContactOut(BaseModel):
    email: str | None = Field(description="as email-validator normalises it, domain in IDNA")
    phone: str | None = Field(description="E.164")
    phone_extension: str | None
    first_name: str | None
    last_name: str | None


class LeadViewOut(BaseModel):
    """A lead as it is now: ``GET /v1/leads/{lead_id}``, an item of ``GET /v1/leads``, the
    answer of ``PATCH``."""

    lead_id: uuid.UUID
    status: Literal["open", "won", "lost", "closed"]
    owner: OwnerOut | None = Field(description="null only while the lead waits for an owner")
    owner_state: OwnerState
    owner_is_fallback: bool
    owner_set_by_hand: bool
    pool: str
    source: str
    source_submission_id: str
    campaign_ids: list[str]
    contact: ContactOut
    hubspot_contact_id: str | None
    is_test: bool = Field(
        description="a sender's test delivery (Google Ads' send test data): stored closed, "
        "never routed"
    )
    created_at: Timestamp
    closed_at: Timestamps
    load_released_at: Timestamps


class LeadPageOut(BaseModel):
    items: list[LeadViewOut]
    next_cursor: str | None


class FieldError(BaseModel):
    field: str = Field(examples=["contact.email"])
    message: str


class Problem(BaseModel):
    """An error answer, RFC 9457 (``application/problem+json``): ``type``, ``title``,
    ``status`` and ``detail``, and as extension members ``error`` (a stable code to match on)
    and what the refusal adds."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {
                    "type": "/docs#problem-invalid_request",
                    "title": "The request has invalid fields",
                    "status": 422,
                    "detail": "refused: contact.email",
                    "error": "invalid_request",
                    "fields": [{"field": "contact.email", "message": "not an email address"}],
                }
            ]
        },
    )

    type: str = Field(description="a URI reference naming the problem; its entry in /docs")
    title: str
    status: int = Field(ge=400, le=599)
    detail: str | None = None
    error: str = Field(description="the stable code clients match on", examples=["rate_limited"])
    fields: list[FieldError] | None = Field(default=None, description="422: each field refused")
    request_id: str | None = Field(default=None, description="on a 500: quote it when asking")
    closed_at: Timestamps = Field(default=None, description="whatsapp_window_closed")
    limit_bytes: int | None = Field(default=None, description="body_too_large")
    lead_id: uuid.UUID | None = Field(default=None, description="idempotency_key_reused")
    activity_id: int | None = Field(default=None, description="external_id_reused")
    violated_policies: list[str] | None = Field(
        default=None,
        alias="violated-policies",
        description="429: the RateLimit policies spent",
    )


# Any JSON a ``payload`` may hold: no NUL in a text or a key (the depth limit, 32 levels for
# the whole body, is the body reader's).
JSON_SCHEMAS: dict[str, Any] = {
    "JsonValue": {
        "anyOf": [
            {"type": ["null", "boolean", "number"]},
            {"type": "string", "pattern": NO_NUL},
            {"type": "array", "items": {"$ref": "#/components/schemas/JsonValue"}},
            {"$ref": "#/components/schemas/JsonObject"},
        ]
    },
    "JsonObject": {
        "type": "object",
        "propertyNames": {"pattern": NO_NUL},
        "additionalProperties": {"$ref": "#/components/schemas/JsonValue"},
    },
}


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    """``[{"field": "contact.email", "message": "..."}]`` from pydantic's errors."""
    errors = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in error["loc"]) or "body"
        errors.append({"field": location, "message": error["msg"]})
    return errors
