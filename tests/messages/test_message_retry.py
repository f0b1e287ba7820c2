"""``morpheus message retry``: failed messages go back in the queue once their cause is
mended, and the next drain sends them once, to the Meta Graph emulator over real HTTP; what
may already have reached the person goes back only when named, what the provider accepted
only when asked for (and without its old provider id); an opt-out never does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import update

from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.models import OutboundMessage, Subscription
from morpheus_pipelines.crm.rules.lead_status import MessageStatus
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from tests.support.intake import Clock
from tests.support.messages import META_TOKEN, PHONE, SENDER_NUMBER, Messaging, drain
from tests.support.messages import whatsapp_senders as _senders


@pytest.fixture
def meta(clock: Clock) -> Iterator[MetaGraphEmulator]:
    with MetaGraphEmulator(token=META_TOKEN, now=clock) as emulator:
        yield emulator


def _retry(capsys: pytest.CaptureFixture[str], messaging: Messaging, *reasons: str):
    argv = ["message", "retry", "--subscription", str(messaging.subscription_id)]
    for reason in reasons:
        argv += ["--reason", reason]
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err.splitlines()


def _failed(messaging: Messaging, message_id, reason: str) -> None:
    with get_session(messaging.url) as session:
        session.execute(
            update(OutboundMessage)
            .where(OutboundMessage.id == message_id)
            .values(status="failed", failureReason=reason)
        )


def test_a_message_failed_for_want_of_a_number_is_sent_once_the_number_is_set(
    database_url: str,
    meta: MetaGraphEmulator,
    clock: Clock,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    messaging = Messaging(database_url, sender_number=None)
    lead = messaging.lead(phone=PHONE)
    numberless = messaging.queue(lead, "whatsapp", at=clock(), template="hello_world")
    maybe_sent = messaging.queue(lead, "whatsapp", at=clock(), template="hello_world")
    drain(database_url, _senders(meta.base_url), clock)
    _failed(messaging, maybe_sent, "send_outcome_unknown")
    assert messaging.message(numberless).failureReason == "no_sender_number"
    with get_session(database_url) as session:
        session.execute(
            update(Subscription)
            .where(Subscription.id == messaging.subscription_id)
            .values(whatsappPhoneNumberId=SENDER_NUMBER)
        )

    assert _retry(capsys, messaging)[:2] == (
        0,
        ["requeued 1", "requeued-reason 1  no_sender_number"],
    )
    assert _retry(capsys, messaging)[1] == ["requeued 0"]  # a second retry finds nothing
    drain(database_url, _senders(meta.base_url), clock.advance(minutes=5))  # due at `now`

    assert len(meta.sent_messages()) == 1
    again = messaging.message(numberless)
    assert (again.status, again.attempts, again.failureReason) == ("sent", 1, None)
    assert messaging.message(maybe_sent).status == "failed"  # may have arrived: not re-sent

    assert _retry(capsys, messaging, "send_outcome_unknown")[1][0] == "requeued 1"
    drain(database_url, _senders(meta.base_url), clock.advance(minutes=5))
    assert len(meta.sent_messages()) == 2


@pytest.mark.parametrize(
    ("reason", "error"),
    [
        ("opted_out", "error: --reason: opted_out: the lead said no; it is never sent again"),
        ("bounced", "error: --reason: 'bounced' is not a failure reason (one of "),
    ],
)
def test_an_opt_out_or_an_unknown_reason_is_refused_in_one_line_and_nothing_moves(
    database_url: str,
    clock: Clock,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reason: str,
    error: str,
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    messaging = Messaging(database_url)
    opted_out = messaging.queue(
        messaging.lead(email="ana@example.com"), "email", at=clock(), body="Hello"
    )
    _failed(messaging, opted_out, "opted_out")

    status, out, err = _retry(capsys, messaging, reason)

    assert (status, out) == (2, [])
    assert [line for line in err if line.startswith("error:")] == err[-1:]
    assert err[-1].startswith(error)
    assert messaging.message(opted_out).status == "failed"


def test_a_message_the_provider_accepted_goes_back_only_when_asked_and_forgets_its_old_id(
    database_url: str,
    meta: MetaGraphEmulator,
    clock: Clock,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    messaging = Messaging(database_url)
    message_id = messaging.queue(
        messaging.lead(phone=PHONE), "whatsapp", at=clock(), template="hello_world"
    )
    drain(database_url, _senders(meta.base_url), clock)
    old_id = messaging.message(message_id).providerMessageId
    assert old_id is not None

    def status(value: MessageStatus, **failure: str) -> bool:
        with get_session(database_url) as session:
            return CrmStore(session).messages.record_provider_status(
                session, old_id, value, clock(), **failure
            )

    # Meta took it, then failed it: the template was refused after the send.
    assert status(MessageStatus.FAILED, failure_code="132001", failure_reason="template_missing")

    assert _retry(capsys, messaging)[1] == ["requeued 0"]  # accepted: not by default
    argv = ["message", "retry", "--subscription", str(messaging.subscription_id)]
    assert main([*argv, "--include-accepted"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "requeued 1"
    requeued = messaging.message(message_id)
    assert (requeued.status, requeued.providerMessageId, requeued.sentAt) == ("queued", None, None)

    # A late webhook of the earlier send finds no message: it cannot move the new attempt.
    assert not status(MessageStatus.SENT)
    assert not status(MessageStatus.FAILED, failure_code="132001", failure_reason="x")
    drain(database_url, _senders(meta.base_url), clock.advance(minutes=5))

    sent = messaging.message(message_id)
    assert len(meta.sent_messages()) == 2
    assert sent.status == "sent" and sent.providerMessageId not in (None, old_id)
