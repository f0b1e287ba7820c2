"""Sending the queued messages as rules (docs/messages.md): when a message that could not be
sent is tried again, what a provider's answer means, which statuses may follow which, and
what is refused at send time.

Pure: no HTTP, no SMTP, no database. The clients (``platform.clients.whatsapp``,
``platform.clients.smtp``) report what happened on the wire; :func:`whatsapp_outcome` and
:func:`smtp_outcome` say what that means for the message; the sending step
(``crm.steps.message_sending``) records it.

* **At most once.** A message is ``sending`` (committed) before the provider is called. An
  answer that certainly means "not sent" (connection refused, a 5xx or 429 answer, an SMTP
  4xx) puts it back to ``queued`` for a later attempt; an answer that leaves it open whether
  the provider took the message (a timeout after the request left, a connection dropped
  before the answer) is :class:`Unknown` and the message is failed ``send_outcome_unknown``,
  never sent again by itself: the Cloud API takes no idempotency key and an email cannot be
  unsent, so a retry could reach the person twice.
* **Bounded retries.** A message put back waits :func:`retry_delay` (30 s, doubling, at most
  an hour, never less than the provider's ``Retry-After``); after ``MAX_ATTEMPTS`` attempts it
  is failed ``retries_exhausted``.
* **Statuses only move forward** (:func:`advance_status`), so the provider's status
  webhooks may arrive late, twice or out of order.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.rules.lead_status import MessageStatus

# Eight attempts with the back-off below span about two hours: an hour-long outage of the
# Cloud API or the mail server leaves every message queued, not failed.
MAX_ATTEMPTS = 8
FIRST_RETRY = timedelta(seconds=30)
LONGEST_RETRY = timedelta(hours=1)
# A message still ``sending`` this long after it was claimed was claimed by a drain that died
# between the provider's call and recording its answer (a drain sends a claimed batch within
# a few timeouts, far less than this).
SENDING_ABANDONED_AFTER = timedelta(minutes=10)
# The Cloud API's template language when a message does not name one.
DEFAULT_TEMPLATE_LANGUAGE = "en_US"


class FailureReason(enum.StrEnum):
    """Why a message ended ``failed`` (``outbound_messages.failureReason``)."""

    # The lead's own doing: expected outcomes, not faults.
    WHATSAPP_WINDOW_CLOSED = "whatsapp_window_closed"  # ours at send time, or Cloud API 131047
    OPTED_OUT = "opted_out"  # the address's newsletter opt-out, at send time
    # Ours or the provider's: someone has to look.
    SEND_OUTCOME_UNKNOWN = "send_outcome_unknown"  # may have been sent: never sent again
    RETRIES_EXHAUSTED = "retries_exhausted"  # the provider stayed unavailable
    TEMPLATE_MISSING = "template_missing"  # Cloud API 132001, or no such email template
    RECIPIENT_INVALID = "recipient_invalid"  # not a WhatsApp user, a refused mailbox
    NO_RECIPIENT = "no_recipient"  # the lead has no phone (WhatsApp) or no email
    NO_SENDER_NUMBER = "no_sender_number"  # the subscription has no WhatsApp number set
    REFUSED = "refused"  # any other permanent refusal (its code is kept)
    DELIVERY_FAILED = "delivery_failed"  # the provider accepted it, then reported failure


# Failures that say something about the lead, not about us: the delivery check counts them
# apart and stays green for them.
LEADS_OWN_REASONS = frozenset({FailureReason.WHATSAPP_WINDOW_CLOSED, FailureReason.OPTED_OUT})

# `morpheus message retry`: what a person may put back in the queue once the cause is mended
# (the provider back, the template approved, the number or the phone set). By default the
# failures the lead did not cause, of messages the provider never accepted: those certainly
# sent nothing. A message that may have arrived (`send_outcome_unknown`) goes back only when
# its reason is named, and one the provider accepted and then reported failed only when asked
# for (`--include-accepted`: a lost `delivered` would make it a second copy); an opt-out never.
REQUEUED_BY_DEFAULT = frozenset(
    {
        FailureReason.RETRIES_EXHAUSTED,
        FailureReason.TEMPLATE_MISSING,
        FailureReason.NO_SENDER_NUMBER,
        FailureReason.NO_RECIPIENT,
    }
)
NEVER_REQUEUED = frozenset({FailureReason.OPTED_OUT})


class RequeueRefused(ValueError):
    """A reason that names no failure, or one that may never be sent again."""


def requeued_reasons(named: Iterable[str]) -> frozenset[FailureReason]:
    """The failure reasons a retry puts back: those ``named``, else the defaults."""
    reasons = set()
    for name in named:
        try:
            reason = FailureReason(name.strip().lower())
        except ValueError:
            known = ", ".join(sorted(r.value for r in FailureReason if r not in NEVER_REQUEUED))
            raise RequeueRefused(f"{name!r} is not a failure reason (one of {known})") from None
        if reason in NEVER_REQUEUED:
            raise RequeueRefused(f"{reason.value}: the lead said no; it is never sent again")
        reasons.add(reason)
    return frozenset(reasons) or REQUEUED_BY_DEFAULT


# -- outcomes of one attempt --------------------------------------------------------------------


@dataclass(frozen=True)
class Sent:
    """The provider took the message; ``provider_id`` is the id its statuses will name."""

    provider_id: str


@dataclass(frozen=True)
class RetryLater:
    """Certainly not sent (nothing reached the provider, or it refused for now)."""

    problem: str
    retry_after: timedelta | None = None


@dataclass(frozen=True)
class Failed:
    """Refused for good; ``code`` is the provider's (``131047``, ``550``) or ``None``."""

    reason: FailureReason
    code: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class Unknown:
    """The request may have reached the provider; its answer did not reach us."""

    problem: str


Outcome = Sent | RetryLater | Failed | Unknown


# -- the WhatsApp Cloud API ---------------------------------------------------------------------

# The Cloud API's error codes (error.code) whose meaning we act on; every other 4xx is a
# permanent refusal with its code kept, every 5xx and 429 a retry.
CLOUD_REENGAGEMENT = 131047  # more than 24 h since the customer last wrote
CLOUD_TEMPLATE_MISSING = 132001  # no such template in that language
CLOUD_RATE_LIMITS = frozenset({4, 80007, 130429, 131048, 131056})
CLOUD_TRANSIENT = frozenset({1, 2, 131000, 131016})  # unknown, service, went wrong, overloaded
CLOUD_RECIPIENT_INVALID = frozenset({131026, 131030, 131021})
CLOUD_BAD_TOKEN = 190


def whatsapp_outcome(status: int, body: Any) -> Outcome:
    """What a Cloud API answer (HTTP ``status``, parsed JSON ``body``) means for the message.

    ``200`` with ``messages[0].id`` → :class:`Sent`; ``429``, ``5xx`` and the Cloud API's
    throttling and "try again" codes → :class:`RetryLater`; 131047 → failed
    ``whatsapp_window_closed``; 132001 → ``template_missing``; an unknown or unreachable
    recipient → ``recipient_invalid``; any other 4xx → ``refused`` with its code. A 2xx
    without a message id cannot be traced by its statuses and is :class:`Unknown`.
    """
    error = body.get("error") if isinstance(body, Mapping) else None
    if 200 <= status < 300:
        messages = body.get("messages") if isinstance(body, Mapping) else None
        if isinstance(messages, list) and messages and isinstance(messages[0], Mapping):
            provider_id = messages[0].get("id")
            if isinstance(provider_id, str) and provider_id:
                return Sent(provider_id)
        return Unknown(f"HTTP {status} without a message id")
    code = error.get("code") if isinstance(error, Mapping) else None
    detail = cloud_error_detail(error)
    if status == 429 or status >= 500 or code in CLOUD_RATE_LIMITS or code in CLOUD_TRANSIENT:
        return RetryLater(f"HTTP {status} code {code}: {detail}".strip())
    code_text = str(code) if code is not None else str(status)
    if code == CLOUD_REENGAGEMENT:
        return Failed(FailureReason.WHATSAPP_WINDOW_CLOSED, code_text, detail)
    if code == CLOUD_TEMPLATE_MISSING:
        return Failed(FailureReason.TEMPLATE_MISSING, code_text, detail)
    if code in CLOUD_RECIPIENT_INVALID:
        return Failed(FailureReason.RECIPIENT_INVALID, code_text, detail)
    if code == CLOUD_BAD_TOKEN or status in (401, 403):
        # A token that expired is ours to fix, and the message is fine: try again later.
        return RetryLater(f"HTTP {status} code {code}: the access token was refused")
    return Failed(FailureReason.REFUSED, code_text, detail)


def cloud_error_detail(error: Any, *, limit: int = 300) -> str:
    """``error_data.details``, else ``message``, of a Graph error object (never the request)."""
    if not isinstance(error, Mapping):
        return ""
    data = error.get("error_data")
    details = data.get("details") if isinstance(data, Mapping) else None
    text = details if isinstance(details, str) and details else error.get("message")
    return str(text)[:limit] if text else ""


def whatsapp_status_failure(errors: Any) -> tuple[FailureReason, str | None]:
    """The reason and code of a ``failed`` status webhook from its ``errors`` list (131047
    arrives this way too when Meta accepts a send and fails it afterwards)."""
    first = errors[0] if isinstance(errors, list) and errors else {}
    code = first.get("code") if isinstance(first, Mapping) else None
    if code == CLOUD_REENGAGEMENT:
        return FailureReason.WHATSAPP_WINDOW_CLOSED, str(code)
    if code == CLOUD_TEMPLATE_MISSING:
        return FailureReason.TEMPLATE_MISSING, str(code)
    if code in CLOUD_RECIPIENT_INVALID:
        return FailureReason.RECIPIENT_INVALID, str(code)
    return FailureReason.DELIVERY_FAILED, str(code) if code is not None else None


# -- SMTP ---------------------------------------------------------------------------------------


def smtp_outcome(code: int, detail: str = "") -> Outcome:
    """What the server's reply code to our envelope or our data means: 4xx is "not now"
    (greylisting, a full queue: retried), 5xx is "never" (a refused mailbox ``recipient_invalid``,
    anything else ``refused``), both with the code kept."""
    if 400 <= code < 500:
        return RetryLater(f"SMTP {code} {detail}".strip())
    if 500 <= code < 600:
        refused_mailbox = code in (550, 551, 553)
        reason = FailureReason.RECIPIENT_INVALID if refused_mailbox else FailureReason.REFUSED
        return Failed(reason, str(code), detail[:300])
    return Unknown(f"SMTP {code} {detail}".strip())


# -- retries ------------------------------------------------------------------------------------


def retry_delay(attempts: int, *, retry_after: timedelta | None = None) -> timedelta:
    """How long a message that has now been tried ``attempts`` times waits: doubling from
    ``FIRST_RETRY`` up to ``LONGEST_RETRY``, never less than the provider's ``Retry-After``."""
    if attempts < 1:
        raise ValueError("a retry follows at least one attempt")
    delay = min(FIRST_RETRY * 2 ** min(attempts - 1, 20), LONGEST_RETRY)
    if retry_after is not None and retry_after > delay:
        return retry_after
    return delay


def next_attempt(
    attempts: int, now: datetime, *, retry_after: timedelta | None = None
) -> datetime | None:
    """When a message not sent on its ``attempts``-th attempt is tried again; ``None``: it
    has had its last attempt (failed ``retries_exhausted``)."""
    if attempts >= MAX_ATTEMPTS:
        return None
    return now + retry_delay(attempts, retry_after=retry_after)


# -- send-time checks ---------------------------------------------------------------------------


def window_open(last_inbound: datetime | None, now: datetime, window: timedelta) -> bool:
    """Whether a free-form WhatsApp message may go at ``now``: the lead wrote within
    ``window`` (the same rule as the enqueue's)."""
    return last_inbound is not None and last_inbound <= now < last_inbound + window


@dataclass(frozen=True)
class SendCheck:
    """What the send-time check knows of one claimed message."""

    channel: str  # "WHATSAPP" or "EMAIL"
    kind: str  # "free_form" or "template"
    phone: str | None
    email: str | None
    sender_number: str | None  # the subscription's WhatsApp phone number id
    last_inbound_whatsapp: datetime | None
    opted_out: bool


def refusal_at_send_time(
    check: SendCheck, now: datetime, window: timedelta
) -> FailureReason | None:
    """Why the message must not go now, or ``None``: a free-form WhatsApp message whose window
    closed since it was queued, an email whose address opted out since, a lead without the
    address, a subscription without a WhatsApp number."""
    if check.channel == "WHATSAPP":
        if not check.phone:
            return FailureReason.NO_RECIPIENT
        if not check.sender_number:
            return FailureReason.NO_SENDER_NUMBER
        if check.kind == "free_form" and not window_open(check.last_inbound_whatsapp, now, window):
            return FailureReason.WHATSAPP_WINDOW_CLOSED
        return None
    if not check.email:
        return FailureReason.NO_RECIPIENT
    if check.opted_out:
        return FailureReason.OPTED_OUT
    return None


# -- statuses -----------------------------------------------------------------------------------

# The order statuses move in. ``failed`` sits above ``sent`` (a sent message may fail
# afterwards: Meta reports 131047 or an undeliverable number by webhook) and below
# ``delivered``: a delivered or read message reached the person, and no failure, whenever it
# arrives, makes that untrue. So the status a message ends in is the highest it was ever
# told, whatever order the webhooks came in.
_RANK = {
    MessageStatus.QUEUED: 0,
    MessageStatus.SENDING: 1,
    MessageStatus.SENT: 2,
    MessageStatus.FAILED: 3,
    MessageStatus.DELIVERED: 4,
    MessageStatus.READ: 5,
}


def advance_status(current: str, incoming: str) -> bool:
    """Whether a message in ``current`` moves to ``incoming``: only forward along queued <
    sending < sent < failed < delivered < read. A repeated or late status (``delivered``
    after ``read``, ``sent`` after ``delivered``) changes nothing; ``cancelled`` is final and
    only a queued message can be cancelled.

    The sender's own step back, ``sending`` → ``queued`` for an attempt that certainly did not
    send, is not a status change a provider can ask for, and is not decided here.
    """
    current_status, incoming_status = MessageStatus(current), MessageStatus(incoming)
    if current_status is MessageStatus.CANCELLED:
        return False
    if incoming_status is MessageStatus.CANCELLED:
        return current_status is MessageStatus.QUEUED
    return _RANK[incoming_status] > _RANK[current_status]


# The column of ``outbound_messages`` each status's time is kept in.
STATUS_TIME_COLUMN = {
    MessageStatus.SENDING: "sendingAt",
    MessageStatus.SENT: "sentAt",
    MessageStatus.DELIVERED: "deliveredAt",
    MessageStatus.READ: "readAt",
    MessageStatus.FAILED: "failedAt",
}


# -- what is sent -------------------------------------------------------------------------------


def message_external_id(message_id: object) -> str:
    """The ``activities.externalId`` of a sent message on its lead's timeline."""
    return f"message:{message_id}"


def email_message_id(message_id: object, from_address: str) -> str:
    """The ``Message-ID`` header of a message's email, made from the message's id so our
    record (``providerMessageId``) and the mail agree: ``<uuid@sender's domain>``."""
    domain = from_address.rpartition("@")[2].strip(" >") or "morpheus.invalid"
    return f"<{message_id}@{domain}>"


def email_subject(body: str, *, limit: int = 78) -> str:
    """A free-form email's subject: its first non-empty line, cut to ``limit`` characters."""
    first = next((line.strip() for line in body.splitlines() if line.strip()), "")
    if len(first) <= limit:
        return first or "(no subject)"
    return first[: limit - 1].rstrip() + "…"


def template_parts(template_name: str, default_language: str) -> tuple[str, str]:
    """``(name, language)`` of a WhatsApp template: ``name`` alone is in ``default_language``,
    ``name:pt_BR`` names its own language."""
    name, _, language = template_name.partition(":")
    return name.strip(), (language.strip() or default_language)


# -- health -------------------------------------------------------------------------------------

# A message still waiting this long after it was queued: the drain is not keeping up, a
# provider has been down for an hour, or a channel is not configured.
WAITING_TOO_LONG = timedelta(hours=1)


def delivery_health(
    failures: Mapping[str, Mapping[str, int]],
    oldest_waiting_at: datetime | None,
    now: datetime,
) -> tuple[bool, dict[str, Any]]:
    """Whether sending is healthy: no message failed (in ``failures``, by channel and reason)
    for a reason other than the lead's own (a closed window, an opt-out: expected, counted
    apart), and none has waited more than ``WAITING_TOO_LONG``. With the figures to show."""
    expected: dict[str, int] = {}
    unexpected: dict[str, int] = {}
    for channel, reasons in failures.items():
        for reason, count in reasons.items():
            bucket = expected if reason in LEADS_OWN_REASONS else unexpected
            key = f"{channel}:{reason}"
            bucket[key] = bucket.get(key, 0) + count
    waited = now - oldest_waiting_at if oldest_waiting_at is not None else timedelta(0)
    passed = not unexpected and waited <= WAITING_TOO_LONG
    return passed, {
        "failed_for_our_reasons": unexpected,
        "failed_for_the_leads_reasons": expected,
        "oldest_waiting_minutes": round(max(waited.total_seconds(), 0) / 60, 1),
    }
