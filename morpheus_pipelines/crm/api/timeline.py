"""The timeline endpoints' work, one transaction each (docs/leads.md, "The timeline"):
recording an activity, reading a page of the timeline, the WhatsApp window, queueing a
message. The caller has already checked the API key and parsed the body."""

from __future__ import annotations

import base64
import binascii
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from morpheus_pipelines.crm.api.schemas import ActivityIn, MessageIn
from morpheus_pipelines.crm.models import Activity, ActivityType
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.crm.repositories.timeline import (
    OutboundMessageRepository,
    TimelineRepository,
)
from morpheus_pipelines.crm.rules.lead_intake import request_fingerprint
from morpheus_pipelines.crm.rules.timeline import (
    InvalidActivity,
    check_caller_external_id,
    check_occurred_at,
    whatsapp_window,
)

_leads = LeadRepository()
_timeline = TimelineRepository()
_messages = OutboundMessageRepository()


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] | None = None


FORBIDDEN = Answer(403, {"error": "forbidden", "message": "no such lead for this API key"})


def lead_of(session: Session, lead_id: uuid.UUID, subscription_id: uuid.UUID) -> bool:
    """Whether the lead exists *and* is the caller's: one answer for both, so ids cannot be
    probed from another subscription."""
    lead = _leads.get_by_id(session, lead_id)
    return lead is not None and lead.subscriptionId == subscription_id


def parse_occurred_at(value: str, now: datetime) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidActivity("occurred_at", "occurred_at is not an ISO 8601 date-time") from None
    return check_occurred_at(parsed, now)


def activity_view(activity: Activity) -> dict[str, Any]:
    metadata = activity.metadata_ or {}
    return {
        "activity_id": activity.id,
        "external_id": activity.externalId,
        "lead_id": str(activity.leadId) if activity.leadId else None,
        "channel": activity.type.value.lower(),
        "direction": activity.direction,
        "occurred_at": activity.occurredAt.isoformat(),
        "subject": activity.subject,
        "body": activity.body,
        "hubspot_owner_id": metadata.get("hubspot_owner_id"),
    }


def record_activity(
    session: Session,
    activity: ActivityIn,
    raw_body: dict[str, Any],
    subscription_id: uuid.UUID,
    now: datetime,
) -> Answer:
    """``201`` new, ``200`` the same external id delivered again, ``422`` the same external
    id with a different body, ``403`` a lead that is not the caller's."""
    check_caller_external_id(activity.external_id)
    occurred_at = parse_occurred_at(activity.occurred_at, now)
    if not lead_of(session, activity.lead_id, subscription_id):
        return FORBIDDEN
    metadata: dict[str, Any] = {"recorded_by": "intake_api"}
    if activity.hubspot_owner_id:
        metadata["hubspot_owner_id"] = activity.hubspot_owner_id
    fingerprint = request_fingerprint(raw_body)
    stored, created = _timeline.record(
        session,
        {
            "subscriptionId": subscription_id,
            "externalId": activity.external_id,
            "type": ActivityType(activity.channel.upper()),
            "direction": activity.direction,
            "leadId": activity.lead_id,
            "occurredAt": occurred_at,
            "subject": activity.subject,
            "body": activity.body,
            "metadata": metadata,
            "requestFingerprint": fingerprint,
        },
    )
    if created:
        return Answer(201, activity_view(stored))
    if stored.requestFingerprint != fingerprint:
        return Answer(
            422,
            {
                "error": "external_id_reused",
                "message": "this external_id was recorded with a different body",
                "activity_id": stored.id,
            },
        )
    return Answer(200, activity_view(stored), {"Idempotent-Replayed": "true"})


def _cursor(activity: Activity) -> str:
    raw = f"{activity.occurredAt.isoformat()}|{activity.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[datetime, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        occurred_at, _, activity_id = raw.rpartition("|")
        moment, position = datetime.fromisoformat(occurred_at), int(activity_id)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        moment, position = None, -1
    if moment is None or moment.tzinfo is None or not 0 < position < 2**63:
        raise InvalidActivity("cursor", "cursor is not one this API returned")
    return moment, position


def timeline_page(
    session: Session,
    lead_id: uuid.UUID,
    subscription_id: uuid.UUID,
    *,
    limit: int,
    cursor: str | None,
) -> Answer:
    before = _decode_cursor(cursor) if cursor else None
    if not lead_of(session, lead_id, subscription_id):
        return FORBIDDEN
    rows = _timeline.page(session, lead_id, limit=limit + 1, before=before)
    more = len(rows) > limit
    rows = rows[:limit]
    return Answer(
        200,
        {
            "items": [activity_view(row) for row in rows],
            "next_cursor": _cursor(rows[-1]) if more else None,
        },
    )


def window_view(
    session: Session, lead_id: uuid.UUID, subscription_id: uuid.UUID, now: datetime
) -> Answer:
    if not lead_of(session, lead_id, subscription_id):
        return FORBIDDEN
    last = _timeline.last_inbound_whatsapp(session, lead_id, at=now)
    return Answer(200, whatsapp_window(last, now).as_json())


def queue_message(
    session: Session,
    message: MessageIn,
    raw_body: dict[str, Any],
    subscription_id: uuid.UUID,
    now: datetime,
    *,
    idempotency_key: str | None,
) -> Answer:
    """``202`` queued (or, for a repeated ``Idempotency-Key``, the original answer), ``422
    whatsapp_window_closed`` with nothing queued, ``403`` a lead that is not the caller's."""
    if message.kind == "template" and message.template_name is None:
        raise InvalidActivity("template_name", "a template message needs template_name")
    if message.kind == "free_form" and message.body is None:
        raise InvalidActivity("body", "a free-form message needs body")
    if not lead_of(session, message.lead_id, subscription_id):
        return FORBIDDEN
    fingerprint = request_fingerprint(raw_body)
    message_id = _messages.enqueue(
        session,
        {
            "subscriptionId": subscription_id,
            "leadId": message.lead_id,
            "channel": message.channel.upper(),
            "kind": message.kind,
            "templateName": message.template_name,
            "body": message.body,
            "idempotencyKey": idempotency_key,
            "requestFingerprint": fingerprint,
        },
        now=now,
    )
    if message_id is not None:
        return Answer(202, {"message_id": str(message_id), "status": "queued"})
    earlier = (
        _messages.get_by_key(session, subscription_id, idempotency_key) if idempotency_key else None
    )
    if earlier is not None:
        if earlier.requestFingerprint != fingerprint:
            return Answer(
                422,
                {
                    "error": "idempotency_key_reused",
                    "message": "this idempotency key was used for a different message",
                },
            )
        return Answer(
            202,
            {"message_id": str(earlier.id), "status": earlier.status},
            {"Idempotent-Replayed": "true"},
        )
    window = whatsapp_window(_timeline.last_inbound_whatsapp(session, message.lead_id, at=now), now)
    return Answer(
        422,
        {
            "error": "whatsapp_window_closed",
            "message": "a free-form WhatsApp message needs a message from the lead in the "
            "last 24 hours; send an approved template instead",
            "closed_at": window.closes_at.isoformat() if window.closes_at else None,
        },
    )
