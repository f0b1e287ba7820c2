"""The JSON the intake API accepts, and how a refusal names the field (docs/leads.md)."""

from __future__ import annotations

import uuid
from typing import Any

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


class OwnerOut(BaseModel):
    sales_rep_id: int | None
    hubspot_owner_id: str


class LeadOut(BaseModel):
    """The answer to a new lead (201) and, verbatim, to its duplicates (200)."""

    lead_id: uuid.UUID
    owner: OwnerOut
    pool: str
    owner_is_fallback: bool
    created_at: str


class ErrorOut(BaseModel):
    error: str
    fields: list[dict[str, str]] | None = None


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    """``[{"field": "contact.email", "message": "..."}]`` from pydantic's errors."""
    errors = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in error["loc"]) or "body"
        errors.append({"field": location, "message": error["msg"]})
    return errors
