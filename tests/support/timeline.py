"""Leads with a history written straight into the timeline, at the times a test chooses."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta

from morpheus_pipelines.crm.models import Lead, Subscription
from morpheus_pipelines.crm.repositories.timeline import TimelineRepository
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.rules.timeline import NudgeRule, Touch
from morpheus_pipelines.crm.steps.lead_automations import add_rule
from morpheus_pipelines.db.session import get_session

_timeline = TimelineRepository()
REP_OWNER_ID = "5001"


def subscription(url: str) -> uuid.UUID:
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(Subscription(id=subscription_id, name="Timeline"))
    return subscription_id


def lead_with_history(
    url: str,
    subscription_id: uuid.UUID,
    created_at: datetime,
    history: Iterable[Touch] = (),
    *,
    owner: str = REP_OWNER_ID,
    email: str | None = None,
) -> uuid.UUID:
    """A lead created at ``created_at`` by a form (its FORM activity, inbound), then
    ``history``. An AI-dialer touch carries the AI owner's id, any other call a rep's."""
    lead_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(
            Lead(
                id=lead_id,
                subscriptionId=subscription_id,
                idempotencyKey=f"web:{lead_id}",
                requestFingerprint="-",
                source="web",
                sourceSubmissionId=str(lead_id),
                ownerHubspotOwnerId=owner,
                email=email,
                response={},
                createdAt=created_at,
            )
        )
        session.flush()
        touches = [Touch(created_at, "form", "inbound"), *history]
        for n, touch in enumerate(touches):
            by = DIALER_FALLBACK_HUBSPOT_OWNER_ID if touch.by_ai_dialer else REP_OWNER_ID
            _timeline.record(
                session,
                {
                    "subscriptionId": subscription_id,
                    "externalId": f"{lead_id}:{n}",
                    "type": touch.channel.upper(),
                    "direction": touch.direction,
                    "leadId": lead_id,
                    "occurredAt": touch.occurred_at,
                    "metadata": {"hubspot_owner_id": by} if touch.direction == "outbound" else {},
                },
            )
    return lead_id


def rule(
    url: str,
    subscription_id: uuid.UUID,
    name: str,
    channel: str,
    quiet_hours: float,
    window_lead_hours: float | None = None,
    kind: str | None = None,
) -> int:
    """A rule sending a template, or on WhatsApp by default a free-form message (the kind the
    window binds)."""
    kind = kind or ("free_form" if channel == "whatsapp" else "template")
    with get_session(url) as session:
        return add_rule(
            session,
            subscription_id,
            name=name,
            rule=NudgeRule(
                channel,
                timedelta(hours=quiet_hours),
                timedelta(hours=window_lead_hours) if window_lead_hours else None,
                kind=kind,
            ),
            template_name=f"{name}_template" if kind == "template" else None,
            body=f"{name} body" if kind == "free_form" else None,
        ).id
