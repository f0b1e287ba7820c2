"""``OutboundMessageRepository.record_provider_status``, what the Meta webhook's ``statuses``
call (docs/messages.md): idempotent, order-safe, the message row the source of truth and the
timeline's activity following it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from morpheus_pipelines.crm.repositories.timeline import OutboundMessageRepository
from morpheus_pipelines.crm.rules.lead_status import MessageStatus
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from tests.support.intake import Clock
from tests.support.messages import META_TOKEN as TOKEN
from tests.support.messages import PHONE, SENDER_NUMBER, Messaging, drain
from tests.support.messages import whatsapp_senders as _senders

_messages = OutboundMessageRepository()


@pytest.fixture
def sent(messaging: Messaging, clock: Clock) -> Iterator[tuple[str, object, object]]:
    """A WhatsApp template sent through the emulator: (wamid, message id, lead id)."""
    with MetaGraphEmulator(token=TOKEN, now=clock) as meta:
        lead = messaging.lead(phone=PHONE)
        message_id = messaging.queue(lead, "whatsapp", at=clock(), template="hello_world")
        drain(messaging.url, _senders(meta.base_url), clock)
        [send] = meta.sent_messages(phone_number_id=SENDER_NUMBER)
        yield send.wamid, message_id, lead


def _record(url: str, wamid: str, status: MessageStatus, at, **failure: str) -> bool:
    with get_session(url) as session:
        return _messages.record_provider_status(session, wamid, status, at, **failure)


def test_statuses_move_forward_once_and_the_timeline_follows(
    messaging: Messaging, clock: Clock, sent
) -> None:
    wamid, message_id, lead = sent
    delivered_at, read_at = clock() + timedelta(seconds=5), clock() + timedelta(minutes=3)

    assert not _record(messaging.url, wamid, MessageStatus.SENT, clock())  # already sent
    assert _record(messaging.url, wamid, MessageStatus.DELIVERED, delivered_at)
    assert not _record(messaging.url, wamid, MessageStatus.DELIVERED, delivered_at)  # replay
    assert _record(messaging.url, wamid, MessageStatus.READ, read_at)
    assert not _record(messaging.url, wamid, MessageStatus.DELIVERED, read_at)  # late
    assert not _record(messaging.url, wamid, MessageStatus.FAILED, read_at, failure_code="131026")

    row = messaging.message(message_id)
    assert (row.status, row.deliveredAt, row.readAt, row.failedAt) == (
        "read",
        delivered_at,
        read_at,
        None,
    )
    [activity] = messaging.outbound_activities(lead)
    assert activity.status == "read" and activity.metadata_["status"] == "read"
    assert activity.metadata_["template"] == "hello_world"


def test_read_before_delivered_ends_read(messaging: Messaging, clock: Clock, sent) -> None:
    wamid, message_id, _ = sent
    assert _record(messaging.url, wamid, MessageStatus.READ, clock())
    assert not _record(messaging.url, wamid, MessageStatus.DELIVERED, clock())
    assert messaging.message(message_id).status == "read"


def test_a_failure_after_sending_keeps_its_reason(messaging: Messaging, clock: Clock, sent) -> None:
    wamid, message_id, lead = sent
    assert _record(
        messaging.url,
        wamid,
        MessageStatus.FAILED,
        clock(),
        failure_code="131047",
        failure_reason="whatsapp_window_closed",
    )
    row = messaging.message(message_id)
    assert (row.status, row.failureReason, row.failureCode, row.failedAt) == (
        "failed",
        "whatsapp_window_closed",
        "131047",
        clock(),
    )
    [activity] = messaging.outbound_activities(lead)
    assert activity.status == "failed"
    assert activity.metadata_["failure_reason"] == "whatsapp_window_closed"
    # Evidence that it arrived after all outranks the failure.
    assert _record(messaging.url, wamid, MessageStatus.DELIVERED, clock())


def test_an_unknown_provider_id_changes_nothing(messaging: Messaging, clock: Clock) -> None:
    assert not _record(messaging.url, "wamid.unknown", MessageStatus.DELIVERED, clock())
