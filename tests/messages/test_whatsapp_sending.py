"""WhatsApp leaves through the Cloud API, here the Meta Graph emulator over real HTTP, on the
real warehouse (docs/messages.md): text and templates as the Cloud API takes them; the window
re-checked at send time; the provider's 131047 and 132001; the API down or throttled → the
message waits and is retried; an answer lost → failed ``send_outcome_unknown``, never sent
twice."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlalchemy import update

from morpheus_pipelines.crm.models import OutboundMessage
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from tests.support.events import EventLines
from tests.support.intake import Clock
from tests.support.messages import (
    META_TOKEN,
    PHONE,
    SENDER_NUMBER,
    Messaging,
    drain,
    free_port,
)
from tests.support.messages import whatsapp_senders as _senders

TOKEN = META_TOKEN


@pytest.fixture
def meta(clock: Clock) -> Iterator[MetaGraphEmulator]:
    with MetaGraphEmulator(token=TOKEN, now=clock) as emulator:
        emulator.add_template("still_interested", "pt_BR", category="MARKETING")
        yield emulator


def _wrote(messaging: Messaging, meta: MetaGraphEmulator, clock: Clock, hours_ago: float):
    """A lead who wrote ``hours_ago`` hours ago: on our timeline and at the provider."""
    lead = messaging.lead(phone=PHONE)
    at = clock() - timedelta(hours=hours_ago)
    messaging.inbound_whatsapp(lead, at)
    meta.record_inbound(SENDER_NUMBER, PHONE, at)
    return lead


def test_a_free_form_message_inside_the_window_is_sent_once(
    messaging: Messaging, meta: MetaGraphEmulator, clock: Clock, event_lines: EventLines
) -> None:
    lead = _wrote(messaging, meta, clock, hours_ago=2)
    message_id = messaging.queue(lead, "whatsapp", at=clock(), body="Hi Ana!")

    report = drain(messaging.url, _senders(meta.base_url), clock)
    again = drain(messaging.url, _senders(meta.base_url), clock.advance(hours=1))

    [sent] = meta.sent_messages()
    assert report.sent == {"whatsapp": 1} and again.attempts == 0
    assert sent.request == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "6591234567",
        "type": "text",
        "text": {"preview_url": False, "body": "Hi Ana!"},
    }
    row = messaging.message(message_id)
    assert (row.status, row.providerMessageId, row.attempts) == ("sent", sent.wamid, 1)
    [activity] = messaging.outbound_activities(lead)
    assert (activity.type, activity.externalId, activity.status) == (
        "WHATSAPP",
        f"message:{message_id}",
        "sent",
    )
    assert activity.body == "Hi Ana!" and activity.metadata_["provider_message_id"] == sent.wamid
    assert TOKEN not in "\n".join(event_lines.lines)


def test_templates_go_by_name_and_language_whatever_the_window(
    messaging: Messaging, meta: MetaGraphEmulator, clock: Clock
) -> None:
    lead = messaging.lead(phone=PHONE)  # never wrote: only templates may go
    default = messaging.queue(lead, "whatsapp", at=clock(), template="hello_world")
    portuguese = messaging.queue(lead, "whatsapp", at=clock(), template="still_interested:pt_BR")
    missing = messaging.queue(lead, "whatsapp", at=clock(), template="no_such_template")

    report = drain(messaging.url, _senders(meta.base_url), clock)

    assert sorted(s.template for s in meta.sent_messages()) == [
        ("hello_world", "en_US"),
        ("still_interested", "pt_BR"),
    ]
    assert {messaging.message(default).status, messaging.message(portuguese).status} == {"sent"}
    row = messaging.message(missing)
    assert (row.status, row.failureReason, row.failureCode) == (
        "failed",
        "template_missing",
        "132001",
    )
    assert report.failed == {"whatsapp": {"template_missing": 1}}


def test_a_window_that_closed_between_queueing_and_sending_sends_nothing(
    messaging: Messaging, meta: MetaGraphEmulator, clock: Clock
) -> None:
    lead = _wrote(messaging, meta, clock, hours_ago=23)
    message_id = messaging.queue(lead, "whatsapp", at=clock(), body="Still there?")
    clock.advance(hours=2)  # the drain comes after the window closed

    report = drain(messaging.url, _senders(meta.base_url), clock)

    assert meta.log.count("messages") == 0  # not even asked
    row = messaging.message(message_id)
    assert (row.status, row.failureReason, row.failureCode) == (
        "failed",
        "whatsapp_window_closed",
        None,
    )
    assert report.failed == {"whatsapp": {"whatsapp_window_closed": 1}}
    assert messaging.outbound_activities(lead) == []


def test_without_the_send_time_check_the_message_reaches_meta(
    messaging: Messaging, clock: Clock
) -> None:
    """The guard above, switched off (a window so long it never closes): a provider that
    accepts first and fails later (Meta may report 131047 by webhook) takes the message."""
    with MetaGraphEmulator(token=TOKEN, now=clock, reengagement_failure="webhook") as meta:
        lead = _wrote(messaging, meta, clock, hours_ago=23)
        messaging.queue(lead, "whatsapp", at=clock(), body="Still there?")
        clock.advance(hours=2)

        drain(messaging.url, _senders(meta.base_url), clock, window=timedelta(days=3650))

        [sent] = meta.sent_messages()
        assert sent.failed_code == 131047


def test_the_providers_re_engagement_error_fails_the_message_with_that_reason(
    messaging: Messaging, meta: MetaGraphEmulator, clock: Clock, event_lines: EventLines
) -> None:
    lead = messaging.lead(phone=PHONE)
    messaging.inbound_whatsapp(lead, clock() - timedelta(hours=1))  # Meta never heard of it
    message_id = messaging.queue(lead, "whatsapp", at=clock(), body="Hi")

    drain(messaging.url, _senders(meta.base_url), clock)

    row = messaging.message(message_id)
    assert (row.status, row.failureReason, row.failureCode) == (
        "failed",
        "whatsapp_window_closed",
        "131047",
    )
    assert meta.sent_messages() == []
    [failure] = event_lines.events("message_failed")
    assert failure["recipient"] == "+65******67" and failure["code"] == "131047"
    text = "\n".join(event_lines.lines)
    assert TOKEN not in text and "91234567" not in text


def test_the_cloud_api_down_makes_messages_wait_then_they_go_once(
    messaging: Messaging, meta: MetaGraphEmulator, clock: Clock
) -> None:
    leads = [_wrote(messaging, meta, clock, hours_ago=1) for _ in range(2)]
    ids = [messaging.queue(lead, "whatsapp", at=clock(), body="Hi") for lead in leads]

    refused = drain(messaging.url, _senders(f"http://127.0.0.1:{free_port()}"), clock)
    assert refused.retried == {"whatsapp": 2} and refused.stopped.keys() == {"whatsapp"}
    assert {messaging.message(i).status for i in ids} == {"queued"}

    meta.fail(503, endpoint="messages", times=1)
    unavailable = drain(messaging.url, _senders(meta.base_url), clock.advance(minutes=5))
    assert unavailable.sent == {} and unavailable.retried == {"whatsapp": 2}

    drain(messaging.url, _senders(meta.base_url), clock.advance(minutes=10))

    assert {messaging.message(i).status for i in ids} == {"sent"}
    assert len(meta.sent_messages()) == 2  # the 503 sent nothing; each went once
    assert {messaging.message(i).attempts for i in ids} == {3}


def test_a_throttled_send_waits_at_least_the_retry_after(
    messaging: Messaging, meta: MetaGraphEmulator, clock: Clock
) -> None:
    lead = _wrote(messaging, meta, clock, hours_ago=1)
    message_id = messaging.queue(lead, "whatsapp", at=clock(), body="Hi")
    meta.fail(429, endpoint="messages", retry_after=600)

    drain(messaging.url, _senders(meta.base_url), clock)

    row = messaging.message(message_id)
    assert row.status == "queued" and row.nextAttemptAt == clock() + timedelta(seconds=600)


def test_an_answer_lost_after_meta_took_the_message_is_never_sent_again(
    messaging: Messaging, meta: MetaGraphEmulator, clock: Clock
) -> None:
    lead = _wrote(messaging, meta, clock, hours_ago=1)
    message_id = messaging.queue(lead, "whatsapp", at=clock(), body="Once")
    meta.lose_answer()

    lost = drain(messaging.url, _senders(meta.base_url), clock)
    later = drain(messaging.url, _senders(meta.base_url), clock.advance(hours=3))

    assert len(meta.sent_messages()) == 1  # Meta sent it; we never heard
    row = messaging.message(message_id)
    assert (row.status, row.failureReason) == ("failed", "send_outcome_unknown")
    assert lost.failed == {"whatsapp": {"send_outcome_unknown": 1}} and later.attempts == 0

    # Without the guard (the message put back to queued, as a blind retry would), Meta sends
    # it a second time: the Cloud API has no idempotency key to stop it.
    with get_session(messaging.url) as session:
        session.execute(
            update(OutboundMessage)
            .where(OutboundMessage.id == message_id)
            .values(status="queued", nextAttemptAt=clock())
        )
    drain(messaging.url, _senders(meta.base_url), clock)
    assert len(meta.sent_messages()) == 2


def test_a_subscription_without_a_number_or_a_lead_without_a_phone_fails_unsent(
    database_url: str, meta: MetaGraphEmulator, clock: Clock
) -> None:
    numberless = Messaging(database_url, sender_number=None)
    no_number = numberless.queue(
        numberless.lead(phone=PHONE), "whatsapp", at=clock(), template="hello_world"
    )
    no_phone = numberless.queue(numberless.lead(), "whatsapp", at=clock(), template="hello_world")

    drain(database_url, _senders(meta.base_url), clock)

    assert numberless.message(no_number).failureReason == "no_sender_number"
    assert numberless.message(no_phone).failureReason == "no_recipient"
    assert meta.log.count("messages") == 0
