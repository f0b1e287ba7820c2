"""The JSON the intake API accepts, and how a refusal names the field (docs/leads.md)."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ContactIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    email: str | None = Field(default=None, max_length=320)
    phone: str | None = Field(default=None, max_length=40)
    first_name: str | None = Field(default=None, max_length=200)
    last_name: str | None = Field(default=None, max_length=200)


class LeadIn(BaseModel):
    """``POST /v1/leads``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    subscription_id: uuid.UUID
    source: str = Field(min_length=1, max_length=100, pattern=r"^\S(.*\S)?$")
    source_submission_id: str = Field(min_length=1, max_length=200, pattern=r"^\S(.*\S)?$")
    campaign_ids: list[str] = Field(default_factory=list, max_length=50)
    contact: ContactIn
    payload: dict[str, Any] | None = None


_TEXT = r"^\S(.*\S)?$"  # not empty, no leading or trailing blanks


class ActivityIn(BaseModel):
    """``POST /v1/activities``: one entry of a lead's timeline, from any channel."""

    model_config = ConfigDict(extra="forbid", strict=True)

    subscription_id: uuid.UUID
    external_id: str = Field(min_length=1, max_length=200, pattern=_TEXT)
    channel: Literal["form", "whatsapp", "call", "email"]
    direction: Literal["inbound", "outbound"]
    lead_id: uuid.UUID
    occurred_at: str = Field(
        min_length=1,
        max_length=64,
        description="ISO 8601 with a timezone, not in the future",
        examples=["2026-12-01T09:30:00+08:00"],
    )
    subject: str | None = Field(default=None, max_length=500)
    body: str | None = Field(default=None, max_length=20_000)
    hubspot_owner_id: str | None = Field(
        default=None, max_length=40, description="the rep who made an outbound touch"
    )


class ActivityOut(BaseModel):
    activity_id: int
    external_id: str
    lead_id: uuid.UUID | None
    channel: str
    direction: str | None
    occurred_at: str
    subject: str | None
    body: str | None
    hubspot_owner_id: str | None


class TimelineOut(BaseModel):
    """Newest first; ``next_cursor`` fetches the next (older) page, ``null`` at the end."""

    items: list[ActivityOut]
    next_cursor: str | None


class WhatsAppWindowOut(BaseModel):
    open: bool
    opened_at: str | None
    closes_at: str | None
    remaining_seconds: int


class MessageIn(BaseModel):
    """``POST /v1/messages``: a free-form message needs ``body``, a template
    ``template_name``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    lead_id: uuid.UUID
    channel: Literal["whatsapp", "email"]
    kind: Literal["free_form", "template"]
    template_name: str | None = Field(default=None, min_length=1, max_length=200, pattern=_TEXT)
    body: str | None = Field(default=None, min_length=1, max_length=4_096)


class MessageOut(BaseModel):
    message_id: uuid.UUID
    status: str


class OwnerOut(BaseModel):
    sales_rep_id: int | None
    hubspot_owner_id: str


class LeadOut(BaseModel):
    """The answer to a new lead (201) and, verbatim, to its duplicates (200)."""

    lead_id: uuid.UUID
    owner: OwnerOut | None = Field(description="null while the lead waits for an owner")
    pool: str
    owner_is_fallback: bool
    owner_state: str = Field(description="assigned, fallback or waiting")
    created_at: str


class OwnerChoiceIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    sales_rep_id: int = Field(ge=1, lt=2**63)


class LeadPatchIn(BaseModel):
    """``PATCH /v1/leads/{lead_id}``: close it, reassign it by hand, or both (reassigned
    first)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    status: Literal["won", "lost", "closed"] | None = None
    owner: OwnerChoiceIn | None = None


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
    owner_state: Literal["assigned", "fallback", "waiting"]
    owner_is_fallback: bool
    owner_set_by_hand: bool
    pool: str
    source: str
    source_submission_id: str
    campaign_ids: list[str]
    contact: ContactOut
    hubspot_contact_id: str | None
    created_at: str
    closed_at: str | None
    load_released_at: str | None


class LeadPageOut(BaseModel):
    items: list[LeadViewOut]
    next_cursor: str | None


class ErrorOut(BaseModel):
    error: str
    message: str | None = None
    fields: list[dict[str, str]] | None = None
    request_id: str | None = Field(default=None, description="on a 500: quote it when asking")


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    """``[{"field": "contact.email", "message": "..."}]`` from pydantic's errors."""
    errors = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in error["loc"]) or "body"
        errors.append({"field": location, "message": error["msg"]})
    return errors
