"""Email leaves through a real SMTP server (aiosmtpd on 127.0.0.1), on the real warehouse
(docs/messages.md): sent once with our Message-ID and on the lead's timeline; re-checked
against the opt-out at send time; a server that is down or answers 4xx → the message waits
and is retried; 5xx → failed with the code; an answer lost → failed ``send_outcome_unknown``
and never sent twice."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from morpheus_pipelines.crm.models import Email, OutboundMessage
from morpheus_pipelines.crm.rules.message_sending import MAX_ATTEMPTS, FailureReason
from morpheus_pipelines.crm.steps.message_sending import MessageSenders, NotConfigured
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.clients.smtp import SmtpServer
from tests.support.intake import Clock
from tests.support.messages import FROM, Messaging, SmtpTestServer, drain, email_senders

ANA = "ana@customer.example"


def test_an_email_is_sent_once_with_our_message_id_and_lands_on_the_timeline(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    lead = messaging.lead(email=ANA)
    message_id = messaging.queue(lead, "email", at=clock(), body="Hello Ana\n\nYour quote.")

    report = drain(messaging.url, email_senders(smtp_server), clock)
    again = drain(messaging.url, email_senders(smtp_server), clock.advance(hours=3))

    assert report.sent == {"email": 1} and again.attempts == 0
    [mail] = smtp_server.mailbox.accepted
    row = messaging.message(message_id)
    assert row.status == "sent" and row.attempts == 1 and row.sentAt is not None
    assert mail["Message-ID"] == row.providerMessageId == f"<{message_id}@acme.example>"
    assert mail["From"] == FROM and mail["To"] == ANA and mail["Subject"] == "Hello Ana"
    assert "Your quote." in mail.get_payload()
    [activity] = messaging.outbound_activities(lead)
    assert activity.externalId == f"message:{message_id}"
    assert (activity.type, activity.direction, activity.status) == ("EMAIL", "outbound", "sent")
    assert activity.subject == "Hello Ana"
    assert activity.metadata_ == {
        "message_id": str(message_id),
        "kind": "free_form",
        "template": None,
        "status": "sent",
        "provider_message_id": row.providerMessageId,
    }


def test_an_email_template_is_the_subscriptions_email_of_that_name(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    with get_session(messaging.url) as session:
        session.add(
            Email(
                subscriptionId=messaging.subscription_id,
                campaignId="still_interested",
                subject="Still interested?",
                body="We kept your quote.",
            )
        )
    lead = messaging.lead(email=ANA)
    known = messaging.queue(lead, "email", at=clock(), template="still_interested")
    unknown = messaging.queue(lead, "email", at=clock(), template="no_such_email")

    drain(messaging.url, email_senders(smtp_server), clock)

    [mail] = smtp_server.mailbox.accepted
    assert mail["Subject"] == "Still interested?"
    assert messaging.message(known).status == "sent"
    missing = messaging.message(unknown)
    assert (missing.status, missing.failureReason) == ("failed", "template_missing")


def test_an_address_that_opted_out_after_queueing_gets_nothing(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    lead = messaging.lead(email=ANA)
    message_id = messaging.queue(lead, "email", at=clock(), body="Offer")
    messaging.opt_out("ANA@customer.example")  # compared case-insensitively

    report = drain(messaging.url, email_senders(smtp_server), clock)

    assert smtp_server.mailbox.accepted == []
    row = messaging.message(message_id)
    assert (row.status, row.failureReason) == ("failed", "opted_out")
    assert report.failed == {"email": {"opted_out": 1}}
    assert messaging.outbound_activities(lead) == []


def test_a_server_that_is_down_makes_messages_wait_then_they_go_once(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    leads = [messaging.lead(email=f"p{n}@customer.example") for n in range(3)]
    ids = [
        messaging.queue(lead, "email", at=clock(), body=f"Hi {n}") for n, lead in enumerate(leads)
    ]
    smtp_server.stop()

    down = drain(messaging.url, email_senders(smtp_server), clock)

    rows = [messaging.message(i) for i in ids]
    assert {row.status for row in rows} == {"queued"}
    assert all(row.nextAttemptAt > clock() for row in rows)
    assert down.stopped.keys() == {"email"}  # one refused connection stops the channel
    assert down.retried == {"email": 3} and down.sent == {}
    not_yet = drain(messaging.url, email_senders(smtp_server), clock)
    assert not_yet.attempts == 0  # waiting its back-off

    smtp_server.start()
    up = drain(messaging.url, email_senders(smtp_server), clock.advance(minutes=5))

    assert up.sent == {"email": 3}
    assert sorted(smtp_server.mailbox.message_ids()) == sorted(f"<{i}@acme.example>" for i in ids)
    assert {messaging.message(i).status for i in ids} == {"sent"}


def test_a_server_down_for_good_fails_the_message_after_the_last_attempt(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    message_id = messaging.queue(messaging.lead(email=ANA), "email", at=clock(), body="Hi")
    smtp_server.stop()

    for _ in range(MAX_ATTEMPTS):
        drain(messaging.url, email_senders(smtp_server), clock)
        clock.advance(hours=2)

    row = messaging.message(message_id)
    assert (row.status, row.failureReason, row.attempts) == (
        "failed",
        "retries_exhausted",
        MAX_ATTEMPTS,
    )


def test_4xx_is_retried_and_5xx_fails_with_the_code(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    greylisted = messaging.queue(
        messaging.lead(email="a@customer.example"), "email", at=clock(), body="1"
    )
    smtp_server.mailbox.rcpt_answers.append("451 4.7.1 Greylisted, try again later")

    first = drain(messaging.url, email_senders(smtp_server), clock)

    assert first.retried == {"email": 1} and messaging.message(greylisted).status == "queued"
    drain(messaging.url, email_senders(smtp_server), clock.advance(minutes=5))
    assert messaging.message(greylisted).status == "sent"

    no_user = messaging.queue(
        messaging.lead(email="b@customer.example"), "email", at=clock(), body="2"
    )
    spam = messaging.queue(
        messaging.lead(email="c@customer.example"), "email", at=clock(), body="3"
    )
    smtp_server.mailbox.rcpt_answers.append("550 5.1.1 No such user")
    smtp_server.mailbox.data_answers.append("554 5.7.1 Message rejected as spam")

    drain(messaging.url, email_senders(smtp_server), clock)

    failures = {
        (row.failureReason, row.failureCode)
        for row in (messaging.message(no_user), messaging.message(spam))
    }
    assert failures == {("recipient_invalid", "550"), ("refused", "554")}
    assert len(smtp_server.mailbox.accepted) == 1


def test_an_answer_lost_after_the_server_took_the_mail_is_never_sent_again(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    message_id = messaging.queue(messaging.lead(email=ANA), "email", at=clock(), body="Once")
    smtp_server.mailbox.lose_answers = 1

    lost = drain(messaging.url, email_senders(smtp_server), clock)
    later = drain(messaging.url, email_senders(smtp_server), clock.advance(hours=3))

    assert len(smtp_server.mailbox.accepted) == 1  # the server has it; we never heard
    row = messaging.message(message_id)
    assert (row.status, row.failureReason) == ("failed", "send_outcome_unknown")
    assert lost.failed == {"email": {"send_outcome_unknown": 1}} and later.attempts == 0

    # Without the guard — the message put back to queued, as a sender that retries an
    # attempt whose answer it lost would do — the person gets the same email twice.
    with get_session(messaging.url) as session:
        session.execute(
            update(OutboundMessage)
            .where(OutboundMessage.id == message_id)
            .values(status="queued", nextAttemptAt=clock())
        )
    drain(messaging.url, email_senders(smtp_server), clock)
    assert smtp_server.mailbox.message_ids() == [f"<{message_id}@acme.example>"] * 2


def test_a_message_left_sending_by_a_drain_that_died_is_not_sent_again(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    message_id = messaging.queue(messaging.lead(email=ANA), "email", at=clock(), body="Once")
    with get_session(messaging.url) as session:  # a drain claims it, calls, and dies
        [claimed] = CrmStore(session).messages.claim_due(
            session, channels=["EMAIL"], now=clock(), limit=10
        )
    assert messaging.message(message_id).status == "sending"

    soon = drain(messaging.url, email_senders(smtp_server), clock.advance(minutes=1))
    assert soon.abandoned == 0 and messaging.message(message_id).status == "sending"
    late = drain(messaging.url, email_senders(smtp_server), clock.advance(minutes=15))

    assert late.abandoned == 1 and smtp_server.mailbox.accepted == []
    row = messaging.message(message_id)
    assert (row.status, row.failureReason) == ("failed", FailureReason.SEND_OUTCOME_UNKNOWN)
    assert claimed.id == message_id


def test_a_channel_not_configured_keeps_its_messages_waiting(
    messaging: Messaging, clock: Clock
) -> None:
    message_id = messaging.queue(messaging.lead(email=ANA), "email", at=clock(), body="Hi")
    senders = MessageSenders(NotConfigured("META_ACCESS_TOKEN"), NotConfigured("MORPHEUS_SMTP_URL"))

    report = drain(messaging.url, senders, clock.advance(hours=1))

    assert report.attempts == 0
    assert report.not_configured == {"whatsapp": "META_ACCESS_TOKEN", "email": "MORPHEUS_SMTP_URL"}
    assert messaging.message(message_id).status == "queued"


def test_the_smtp_url_forms_and_the_password_stays_out_of_reprs() -> None:
    plain = SmtpServer.from_url("smtp://mail.example")
    assert (plain.host, plain.port, plain.implicit_tls, plain.starttls) == (
        "mail.example",
        25,
        False,
        False,
    )
    tls = SmtpServer.from_url("smtps://u%40x:p%2Fw0rd-secret@mail.example")
    assert (tls.port, tls.implicit_tls, tls.user, tls.password) == (
        465,
        True,
        "u@x",
        "p/w0rd-secret",
    )
    upgraded = SmtpServer.from_url("smtp://u:hunter22@mail.example:587?starttls=true")
    assert (upgraded.port, upgraded.starttls) == (587, True)
    assert "hunter22" not in repr(upgraded) and "w0rd" not in repr(tls)
    for bad in ("http://mail.example", "smtp://", "smtps://h?starttls=true"):
        try:
            SmtpServer.from_url(bad.replace("h?", "mail.example?"))
        except ValueError as exc:
            assert "hunter" not in str(exc)
        else:
            raise AssertionError(bad)


def test_timeline_and_backlog_leave_no_time_unset(
    messaging: Messaging, smtp_server: SmtpTestServer, clock: Clock
) -> None:
    message_id = messaging.queue(messaging.lead(email=ANA), "email", at=clock(), body="Hi")
    drain(messaging.url, email_senders(smtp_server), clock.advance(seconds=1))
    row = messaging.message(message_id)
    assert row.sendingAt == row.sentAt == clock() and row.createdAt == clock() - timedelta(
        seconds=1
    )


def test_the_senders_secrets_are_masked_in_the_settings() -> None:
    from morpheus_pipelines.platform.settings import load_settings

    settings = load_settings(
        {
            "META_ACCESS_TOKEN": "EAAG-secret-token",
            "MORPHEUS_SMTP_URL": "smtps://u:hunter22@mail.example",
            "MORPHEUS_EMAIL_FROM": "sales@acme.example",
        }
    )
    shown = repr(settings)
    assert "EAAG-secret-token" not in shown and "hunter22" not in shown
    assert "meta_access_token=<set>" in shown and "smtp_url=<set>" in shown
    assert settings.meta_graph_base_url == "https://graph.facebook.com"
    assert settings.meta_graph_api_version == "v21.0"
