"""WhatsApp both ways over real HTTP, Meta's emulator on one side and the service on the
other: a person's message opens the window, the reply queued in it leaves through the Cloud
API, and the statuses Meta posts back move it to delivered and read."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from morpheus_pipelines.crm.models import Activity
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from tests.senders.conftest import META_APP_SECRET
from tests.support.messages import META_TOKEN, PHONE, SENDER_NUMBER, Messaging, drain
from tests.support.messages import whatsapp_senders as senders


@pytest.fixture
def meta(service) -> Iterator[MetaGraphEmulator]:
    base, _ = service
    with MetaGraphEmulator(
        token=META_TOKEN, app_secret=META_APP_SECRET, webhook_url=f"{base}/v1/webhooks/meta"
    ) as emulator:
        yield emulator


def test_a_reply_in_the_window_leaves_and_its_statuses_come_back(
    database_url: str, meta: MetaGraphEmulator
) -> None:
    messaging = Messaging(database_url)
    lead = messaging.lead(phone=PHONE)
    assert meta.send_inbound_message(SENDER_NUMBER, PHONE.lstrip("+"), "Still available?") == 200
    [inbound] = [a for a in messaging_activities(messaging, lead) if a.direction == "inbound"]
    assert inbound.body == "Still available?"  # the real message, on the lead's timeline

    message_id = messaging.queue(lead, "whatsapp", at=datetime.now(UTC), body="Yes! Call now?")
    report = drain(database_url, senders(meta.base_url), datetime.now(UTC))
    assert report.sent == {"whatsapp": 1}
    [sent] = meta.sent_messages()
    assert messaging.message(message_id).providerMessageId == sent.wamid

    meta.deliver_statuses(sent.wamid, ["delivered", "read"])
    meta.deliver_statuses(sent.wamid, ["delivered"])  # late and repeated: changes nothing
    message = messaging.message(message_id)
    assert message.status == "read"
    assert message.deliveredAt is not None and message.readAt is not None
    [outbound] = messaging.outbound_activities(lead)
    assert outbound.status == "read"


def test_a_failure_meta_reports_later_fails_the_message_with_its_reason(
    database_url: str, meta: MetaGraphEmulator
) -> None:
    messaging = Messaging(database_url)
    lead = messaging.lead(phone=PHONE)
    meta.send_inbound_message(SENDER_NUMBER, PHONE.lstrip("+"), "hello")
    message_id = messaging.queue(lead, "whatsapp", at=datetime.now(UTC), body="Hi")
    drain(database_url, senders(meta.base_url), datetime.now(UTC))
    [sent] = meta.sent_messages()
    meta.deliver_failure(sent.wamid, code=131026, details="Message undeliverable")
    message = messaging.message(message_id)
    assert (message.status, message.failureCode) == ("failed", "131026")
    assert message.failureReason == "Message undeliverable"


def messaging_activities(messaging: Messaging, lead: uuid.UUID) -> list[Activity]:
    with get_session(messaging.url) as session:
        rows = list(session.scalars(select(Activity).where(Activity.leadId == lead)))
        session.expunge_all()
        return rows
