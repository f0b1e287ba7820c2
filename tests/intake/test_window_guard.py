"""The window check and the enqueue are one statement: a window that closes between a check
and an enqueue cannot leak a free-form WhatsApp message. A naive check-then-insert, run with
the same clock, does leak one, which is what shows this test can fail."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import select

from morpheus_pipelines.crm.models import OutboundMessage
from morpheus_pipelines.crm.repositories.timeline import (
    OutboundMessageRepository,
    TimelineRepository,
)
from morpheus_pipelines.crm.rules.timeline import WHATSAPP_WINDOW, whatsapp_window
from morpheus_pipelines.db.session import get_session
from tests.support.intake import Tenant, client, create_lead, intake_settings, serving

_messages = OutboundMessageRepository()
_timeline = TimelineRepository()


class Ticking:
    """A clock that moves on by ``step`` every time it is read."""

    def __init__(self, start: datetime, step: timedelta) -> None:
        self.now, self.step = start, step

    def __call__(self) -> datetime:
        now = self.now
        self.now += self.step
        return now


def _free_form(tenant: Tenant, lead_id: uuid.UUID) -> dict:
    return {
        "subscriptionId": tenant.subscription_id,
        "leadId": lead_id,
        "channel": "WHATSAPP",
        "kind": "free_form",
        "body": "Are you still interested?",
    }


def naive_enqueue(session, data: dict, clock: Callable[[], datetime]) -> bool:
    """Read the window, then insert: two steps, two readings of the clock."""
    last = _timeline.last_inbound_whatsapp(session, data["leadId"], at=clock())
    if not whatsapp_window(last, clock()).open:
        return False
    session.add(OutboundMessage(**data, createdAt=clock()))
    session.flush()
    return True


def guarded_enqueue(session, data: dict, clock: Callable[[], datetime]) -> bool:
    return _messages.enqueue(session, data, now=clock()) is not None


def leaked(url: str, lead_id: uuid.UUID, closes_at: datetime) -> int:
    """Free-form WhatsApp messages queued at or after the window closed."""
    with get_session(url) as session:
        rows = session.scalars(
            select(OutboundMessage).where(
                OutboundMessage.leadId == lead_id,
                OutboundMessage.kind == "free_form",
                OutboundMessage.createdAt >= closes_at,
            )
        )
        return len(list(rows))


def _lead_with_inbound_whatsapp(url: str) -> tuple[Tenant, uuid.UUID, datetime]:
    tenant = Tenant(url)
    with serving(intake_settings(url)) as (base, _):
        lead_id = uuid.UUID(create_lead(client(tenant.key), base, tenant, "s-1"))
    inbound_at = datetime.fromisoformat("2026-11-30T08:00:00+00:00")
    with get_session(url) as session:
        _timeline.record(
            session,
            {
                "subscriptionId": tenant.subscription_id,
                "externalId": "wa-in",
                "type": "WHATSAPP",
                "direction": "inbound",
                "leadId": lead_id,
                "occurredAt": inbound_at,
            },
        )
    return tenant, lead_id, inbound_at + WHATSAPP_WINDOW


def test_the_guarded_enqueue_never_queues_after_the_window_closed(database_url: str) -> None:
    tenant, lead_id, closes_at = _lead_with_inbound_whatsapp(database_url)
    # The clock moves on a microsecond each time it is read, across the close.
    clock = Ticking(closes_at - timedelta(microseconds=2), timedelta(microseconds=1))
    queued = []
    for _ in range(4):  # at close - 2 µs, - 1 µs, at the close, + 1 µs
        with get_session(database_url) as session:
            queued.append(guarded_enqueue(session, _free_form(tenant, lead_id), clock))
    assert queued == [True, True, False, False]
    assert leaked(database_url, lead_id, closes_at) == 0


def test_a_naive_check_then_insert_leaks_a_message_at_the_boundary(database_url: str) -> None:
    tenant, lead_id, closes_at = _lead_with_inbound_whatsapp(database_url)
    clock = Ticking(closes_at - timedelta(microseconds=2), timedelta(microseconds=1))
    with get_session(database_url) as session:
        assert naive_enqueue(session, _free_form(tenant, lead_id), clock)
    assert leaked(database_url, lead_id, closes_at) == 1
