"""The sending rules (docs/messages.md): back-off and its bound, what a provider's answer
means, which statuses may follow which, and the send-time refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from morpheus_pipelines.crm.rules.lead_status import MessageStatus
from morpheus_pipelines.crm.rules.message_sending import (
    FIRST_RETRY,
    LONGEST_RETRY,
    MAX_ATTEMPTS,
    Failed,
    FailureReason,
    RetryLater,
    SendCheck,
    Sent,
    Unknown,
    advance_status,
    email_message_id,
    email_subject,
    next_attempt,
    refusal_at_send_time,
    retry_delay,
    smtp_outcome,
    template_parts,
    whatsapp_outcome,
    whatsapp_status_failure,
    window_open,
)

NOW = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
DAY = timedelta(hours=24)


def _cloud_error(code: int, details: str = "d") -> dict:
    return {
        "error": {
            "message": f"(#{code}) title",
            "type": "OAuthException",
            "code": code,
            "error_data": {"messaging_product": "whatsapp", "details": details},
            "fbtrace_id": "AbC",
        }
    }


# -- back-off ---------------------------------------------------------------------------------


def test_the_back_off_doubles_up_to_an_hour_and_honours_retry_after() -> None:
    assert retry_delay(1) == FIRST_RETRY
    assert retry_delay(2) == 2 * FIRST_RETRY
    assert retry_delay(30) == LONGEST_RETRY
    assert retry_delay(1, retry_after=timedelta(minutes=5)) == timedelta(minutes=5)
    assert retry_delay(3, retry_after=timedelta(seconds=1)) == 4 * FIRST_RETRY
    with pytest.raises(ValueError):
        retry_delay(0)


def test_attempts_are_bounded_and_span_an_hour_long_outage() -> None:
    assert next_attempt(MAX_ATTEMPTS, NOW) is None
    waited = sum((retry_delay(n) for n in range(1, MAX_ATTEMPTS)), timedelta(0))
    assert waited > timedelta(hours=1)
    assert next_attempt(MAX_ATTEMPTS - 1, NOW) == NOW + retry_delay(MAX_ATTEMPTS - 1)


@given(st.integers(1, 1_000))
def test_the_back_off_never_shrinks_and_stays_bounded(attempts: int) -> None:
    assert FIRST_RETRY <= retry_delay(attempts) <= LONGEST_RETRY
    assert retry_delay(attempts + 1) >= retry_delay(attempts)


# -- the Cloud API's answers --------------------------------------------------------------------


def test_an_accepted_send_is_sent_with_its_wamid() -> None:
    body = {
        "messaging_product": "whatsapp",
        "contacts": [{"input": "6591234567", "wa_id": "6591234567"}],
        "messages": [{"id": "wamid.HBgM"}],
    }
    assert whatsapp_outcome(200, body) == Sent("wamid.HBgM")
    assert isinstance(whatsapp_outcome(200, {"messages": []}), Unknown)


@pytest.mark.parametrize(
    ("status", "code", "reason"),
    [
        (400, 131047, FailureReason.WHATSAPP_WINDOW_CLOSED),
        (404, 132001, FailureReason.TEMPLATE_MISSING),
        (400, 131026, FailureReason.RECIPIENT_INVALID),
        (400, 100, FailureReason.REFUSED),
    ],
)
def test_a_refusal_fails_with_its_code(status: int, code: int, reason: FailureReason) -> None:
    outcome = whatsapp_outcome(status, _cloud_error(code, "why"))
    assert outcome == Failed(reason, str(code), "why")


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (503, _cloud_error(2)),
        (500, _cloud_error(131000)),
        (429, _cloud_error(130429)),
        (400, _cloud_error(131056)),  # pair rate limit: a 400 that means "later"
        (502, None),  # a proxy's HTML page
        (401, _cloud_error(190)),  # the token expired: ours to fix, the message is fine
    ],
)
def test_unavailable_or_throttled_is_retried(status: int, body: object) -> None:
    assert isinstance(whatsapp_outcome(status, body), RetryLater)


def test_a_failed_status_webhook_names_its_reason() -> None:
    assert whatsapp_status_failure([{"code": 131047}]) == (
        FailureReason.WHATSAPP_WINDOW_CLOSED,
        "131047",
    )
    assert whatsapp_status_failure([]) == (FailureReason.DELIVERY_FAILED, None)


# -- SMTP -------------------------------------------------------------------------------------


def test_smtp_4xx_is_transient_and_5xx_permanent() -> None:
    assert isinstance(smtp_outcome(451, "greylisted"), RetryLater)
    assert smtp_outcome(550, "no such user") == Failed(
        FailureReason.RECIPIENT_INVALID, "550", "no such user"
    )
    assert smtp_outcome(554, "spam") == Failed(FailureReason.REFUSED, "554", "spam")


# -- statuses ---------------------------------------------------------------------------------

STATUSES = [s for s in MessageStatus]


def test_statuses_only_move_forward() -> None:
    assert advance_status("queued", "sending")
    assert advance_status("sending", "sent")
    assert advance_status("sent", "delivered")
    assert advance_status("delivered", "read")
    assert advance_status("sent", "failed")  # 131047 or undeliverable, reported by webhook
    assert not advance_status("read", "delivered")  # a late delivered changes nothing
    assert not advance_status("delivered", "sent")
    assert not advance_status("read", "failed")  # it reached the person: stays read
    assert not advance_status("delivered", "failed")
    assert advance_status("failed", "delivered")  # evidence it arrived wins
    assert not advance_status("sent", "sent")
    assert advance_status("queued", "cancelled")
    assert not advance_status("sent", "cancelled")
    assert not advance_status("cancelled", "sent")


_PROVIDER = [MessageStatus.SENT, MessageStatus.DELIVERED, MessageStatus.READ, MessageStatus.FAILED]


def _apply(start: MessageStatus, arrivals: list[MessageStatus]) -> MessageStatus:
    current = start
    for incoming in arrivals:
        if advance_status(current, incoming):
            current = incoming
    return current


@given(st.lists(st.sampled_from(_PROVIDER), max_size=8), st.randoms())
def test_webhooks_in_any_order_end_in_the_same_status(arrivals, random) -> None:
    """Order-safe: however the provider's statuses are shuffled or repeated, the message
    ends in the same one."""
    shuffled = list(arrivals)
    random.shuffle(shuffled)
    twice = shuffled + shuffled
    expected = _apply(MessageStatus.SENT, arrivals)
    assert _apply(MessageStatus.SENT, shuffled) == expected
    assert _apply(MessageStatus.SENT, twice) == expected


@given(st.sampled_from(STATUSES), st.sampled_from(STATUSES))
def test_no_status_goes_both_ways(a: MessageStatus, b: MessageStatus) -> None:
    assert not (advance_status(a, b) and advance_status(b, a))


# -- send-time checks -------------------------------------------------------------------------


def _check(**overrides: object) -> SendCheck:
    values = {
        "channel": "WHATSAPP",
        "kind": "free_form",
        "phone": "+6591234567",
        "email": "ana@example.com",
        "sender_number": "100000000000101",
        "last_inbound_whatsapp": NOW - timedelta(hours=1),
        "opted_out": False,
    } | overrides
    return SendCheck(**values)  # type: ignore[arg-type]


def test_the_window_is_rechecked_at_send_time() -> None:
    assert refusal_at_send_time(_check(), NOW, DAY) is None
    closed = _check(last_inbound_whatsapp=NOW - DAY)
    assert refusal_at_send_time(closed, NOW, DAY) is FailureReason.WHATSAPP_WINDOW_CLOSED
    never = _check(last_inbound_whatsapp=None)
    assert refusal_at_send_time(never, NOW, DAY) is FailureReason.WHATSAPP_WINDOW_CLOSED
    template = _check(kind="template", last_inbound_whatsapp=None)
    assert refusal_at_send_time(template, NOW, DAY) is None  # a template may go any time


def test_an_email_is_rechecked_against_the_opt_out() -> None:
    email = _check(channel="EMAIL", last_inbound_whatsapp=None)
    assert refusal_at_send_time(email, NOW, DAY) is None
    opted_out = _check(channel="EMAIL", opted_out=True)
    assert refusal_at_send_time(opted_out, NOW, DAY) is FailureReason.OPTED_OUT
    no_email = _check(channel="EMAIL", email=None)
    assert refusal_at_send_time(no_email, NOW, DAY) is FailureReason.NO_RECIPIENT
    no_number = _check(sender_number=None)
    assert refusal_at_send_time(no_number, NOW, DAY) is FailureReason.NO_SENDER_NUMBER


@given(st.integers(-48 * 3600, 48 * 3600))
def test_the_window_is_the_24_hours_after_the_last_inbound(seconds_ago: int) -> None:
    last = NOW - timedelta(seconds=seconds_ago)
    assert window_open(last, NOW, DAY) == (0 <= seconds_ago < DAY.total_seconds())


# -- what is sent -------------------------------------------------------------------------------


def test_the_message_id_and_subject_and_template_language() -> None:
    assert email_message_id("0b1c", "Acme <sales@acme.example>") == "<0b1c@acme.example>"
    assert email_subject("Hello Ana\n\nThe details…") == "Hello Ana"
    assert len(email_subject("x" * 200)) == 78
    assert email_subject("") == "(no subject)"
    assert template_parts("still_interested", "en_US") == ("still_interested", "en_US")
    assert template_parts("still_interested:pt_BR", "en_US") == ("still_interested", "pt_BR")
