"""``POST /v1/activities``: one entry of a lead's timeline, from any channel, recorded once
per external id (docs/leads.md, "The timeline")."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import FORBIDDEN, Answer, intake_of, parsed, respond
from morpheus_pipelines.crm.api.leads import lead_is_callers, lead_location
from morpheus_pipelines.crm.api.problems import problem
from morpheus_pipelines.crm.api.schemas import ActivityIn
from morpheus_pipelines.crm.models import Activity, ActivityType
from morpheus_pipelines.crm.repositories.timeline import TimelineRepository
from morpheus_pipelines.crm.rules.lead_intake import request_fingerprint
from morpheus_pipelines.crm.rules.timeline import (
    InvalidActivity,
    check_caller_external_id,
    check_occurred_at,
)

_timeline = TimelineRepository()


async def post_activity(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    raw = await intake.read_json(request)
    activity = parsed(ActivityIn, raw)
    if activity.subscription_id != subscription_id:
        return respond(FORBIDDEN)
    now = intake.now()
    return respond(
        await intake.in_transaction(
            lambda session: record_activity(session, activity, raw, subscription_id, now)
        )
    )


ROUTES = [Route("/v1/activities", post_activity, methods=["POST"])]


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
    if not lead_is_callers(session, activity.lead_id, subscription_id):
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
        # No single activity has a URL of its own: the 201 points at the timeline that
        # lists it (GET /v1/leads/{lead_id}/timeline).
        return Answer(201, activity_view(stored), {"Location": timeline_location(stored.leadId)})
    if stored.requestFingerprint != fingerprint:
        return Answer(
            422,
            problem(
                422,
                "external_id_reused",
                "this external_id was recorded with a different body",
                activity_id=stored.id,
            ),
        )
    return Answer(200, activity_view(stored), {"Idempotent-Replayed": "true"})


def timeline_location(lead_id: uuid.UUID) -> str:
    """Where a recorded activity is listed (``Location`` of its 201)."""
    return f"{lead_location(lead_id)}/timeline"


# RFC 3339's date-time (what the document's ``format: date-time`` says); Python would also
# read ISO 8601's other forms (a week date, no seconds, a space for the T).
_RFC_3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)


def parse_occurred_at(value: str, now: datetime) -> datetime:
    try:
        parsed_at = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidActivity("occurred_at", "occurred_at is not an ISO 8601 date-time") from None
    instant = check_occurred_at(parsed_at, now)
    if not _RFC_3339.match(value):
        raise InvalidActivity(
            "occurred_at", "occurred_at must be RFC 3339, e.g. 2026-12-01T09:30:00+08:00"
        )
    return instant


def activity_view(activity: Activity) -> dict[str, Any]:
    """An activity as the API shows it (here and in the timeline)."""
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
