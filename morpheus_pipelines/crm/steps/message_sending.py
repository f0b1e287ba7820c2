"""Sending the queued messages (docs/messages.md): WhatsApp through the Cloud API, email
through SMTP, each message at most once.

One drain:

1. **Abandoned sends.** A message still ``sending`` from a drain that died between the
   provider's call and recording its answer is failed ``send_outcome_unknown``. It is not sent
   again: the Cloud API takes no idempotency key and an email cannot be unsent, so a second
   attempt could reach the person twice; a person decides.
2. **Claim and check.** A few due messages of the configured channels are marked ``sending``
   and, in the same transaction, checked against what may have changed since they were
   queued: a free-form WhatsApp message whose 24-hour window has closed is failed
   ``whatsapp_window_closed``, an email whose address opted out ``opted_out``, neither sent.
   The transaction commits before any provider is called.
3. **Send and record.** Each message is sent, and its outcome recorded in its own
   transaction: ``sent`` (with the provider's id, and an outbound activity on the lead's
   timeline), back to ``queued`` with a back-off when it certainly was not sent (connection
   refused, 5xx, 429, SMTP 4xx; a channel that fails so is not tried again in this drain), or
   ``failed`` with the provider's code and reason. An attempt whose answer was lost is
   failed ``send_outcome_unknown`` at once, for the reason above.

A channel without configuration (no token, no SMTP URL) is not claimed at all: its messages
wait, counted in the report, until it is configured.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from morpheus_pipelines.crm.models import WHATSAPP_WINDOW_SECONDS
from morpheus_pipelines.crm.repositories.message_sending import (
    ClaimedMessage,
    MessageBacklog,
    send_check,
)
from morpheus_pipelines.crm.rules.message_sending import (
    DEFAULT_TEMPLATE_LANGUAGE,
    SENDING_ABANDONED_AFTER,
    Failed,
    FailureReason,
    Outcome,
    RetryLater,
    Sent,
    Unknown,
    email_message_id,
    email_subject,
    next_attempt,
    refusal_at_send_time,
    requeued_reasons,
    smtp_outcome,
    template_parts,
    whatsapp_outcome,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients import smtp, whatsapp
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.redaction import mask_email, mask_phone

WHATSAPP = "WHATSAPP"
EMAIL = "EMAIL"
CLAIM_SIZE = 10  # messages marked ``sending`` at a time (what a crash could leave unknown)
WINDOW = timedelta(seconds=WHATSAPP_WINDOW_SECONDS)


class WhatsAppSender(Protocol):
    configured: bool

    def send(self, phone_number_id: str, message: dict[str, Any]) -> whatsapp.Answer: ...


class EmailSender(Protocol):
    configured: bool
    from_address: str

    def build(self, message_id: str, to: str, subject: str, body: str) -> Any: ...

    def send(self, mail: Any) -> None: ...


@dataclass(frozen=True)
class NotConfigured:
    """A channel whose settings are missing: its messages wait (docs/messages.md)."""

    missing: str
    configured: bool = False
    from_address: str = ""

    def send(self, *args: object) -> Any:
        raise RuntimeError(f"not configured: {self.missing}")

    def build(self, *args: object) -> Any:
        raise RuntimeError(f"not configured: {self.missing}")


@dataclass
class MessageSenders:
    """The two channels' senders (a real one or :class:`NotConfigured`)."""

    whatsapp: WhatsAppSender | NotConfigured
    email: EmailSender | NotConfigured
    template_language: str = DEFAULT_TEMPLATE_LANGUAGE

    def of(self, channel: str) -> WhatsAppSender | EmailSender | NotConfigured:
        return self.whatsapp if channel == WHATSAPP else self.email

    def not_configured(self) -> dict[str, str]:
        """``channel → what is missing`` for each channel that cannot send."""
        return {
            channel.lower(): sender.missing
            for channel in (WHATSAPP, EMAIL)
            if isinstance(sender := self.of(channel), NotConfigured)
        }


@dataclass
class DeliveryReport:
    """What one drain did, by channel (``whatsapp``, ``email``)."""

    sent: Counter[str] = field(default_factory=Counter)
    retried: Counter[str] = field(default_factory=Counter)
    failed: dict[str, Counter[str]] = field(default_factory=dict)
    abandoned: int = 0
    stopped: dict[str, str] = field(default_factory=dict)
    not_configured: dict[str, str] = field(default_factory=dict)

    def count_failure(self, channel: str, reason: str) -> None:
        self.failed.setdefault(channel.lower(), Counter())[str(reason)] += 1

    @property
    def attempts(self) -> int:
        failed = sum(sum(reasons.values()) for reasons in self.failed.values())
        return sum(self.sent.values()) + sum(self.retried.values()) + failed

    def as_metadata(self) -> dict[str, Any]:
        return {
            "sent": dict(self.sent),
            "retried": dict(self.retried),
            "failed": {channel: dict(reasons) for channel, reasons in self.failed.items()},
            "abandoned_as_unknown": self.abandoned,
            "stopped": dict(self.stopped),
            "not_configured": dict(self.not_configured),
        }


def _utc_now() -> datetime:
    return datetime.now(UTC)


def deliver_messages(
    session_factory: SessionFactory,
    senders: MessageSenders,
    *,
    now: Callable[[], datetime] = _utc_now,
    window: timedelta = WINDOW,
    max_messages: int = 10_000,
    claim_size: int = CLAIM_SIZE,
) -> DeliveryReport:
    """Send up to ``max_messages`` due messages of every subscription (see the module)."""
    report = DeliveryReport(not_configured=senders.not_configured())
    with session_factory() as session:
        store = CrmStore(session)
        abandoned = store.messages.abandon_in_flight(
            session, now=now(), after=SENDING_ABANDONED_AFTER
        )
    for message_id, channel in abandoned:
        report.count_failure(channel, FailureReason.SEND_OUTCOME_UNKNOWN)
        log_event(
            "message_send_outcome_unknown",
            level=logging.ERROR,
            message_id=str(message_id),
            channel=channel.lower(),
            problem="found sending after its drain ended",
        )
    report.abandoned = len(abandoned)
    channels = {c for c in (WHATSAPP, EMAIL) if senders.of(c).configured}
    budget = max_messages
    while budget > 0 and channels:
        claimed = _claim(session_factory, report, channels, now(), window, min(claim_size, budget))
        if claimed is None:
            break
        budget -= len(claimed)
        for message in claimed:
            if message.channel not in channels:  # stopped earlier in this batch
                _release(session_factory, message, report, now())
                continue
            outcome = _attempt(senders, message)
            _record(session_factory, report, message, outcome, now())
            if isinstance(outcome, RetryLater):
                channels.discard(message.channel)
                report.stopped[message.channel.lower()] = outcome.problem
    return report


def _claim(
    session_factory: SessionFactory,
    report: DeliveryReport,
    channels: set[str],
    moment: datetime,
    window: timedelta,
    limit: int,
) -> list[ClaimedMessage] | None:
    """Claim a batch and fail, unsent, those the send-time check refuses (one transaction);
    the messages to send, or ``None`` when nothing was due."""
    with session_factory() as session:
        store = CrmStore(session)
        claimed = store.messages.claim_due(session, channels=channels, now=moment, limit=limit)
        if not claimed:
            return None
        to_send = []
        for message in claimed:
            refusal = refusal_at_send_time(send_check(message), moment, window)
            if refusal is None:
                to_send.append(message)
                continue
            store.messages.fail(session, message.id, refusal, at=moment)
            report.count_failure(message.channel, refusal)
            _log_failure(message, refusal, None, "refused at send time")
    return to_send


def _attempt(senders: MessageSenders, message: ClaimedMessage) -> Outcome:
    if message.channel == WHATSAPP:
        return _send_whatsapp(senders, message)
    return _send_email(senders, message)


def _send_whatsapp(senders: MessageSenders, message: ClaimedMessage) -> Outcome:
    to = (message.phone or "").lstrip("+")
    if message.kind == "template":
        name, language = template_parts(message.template_name or "", senders.template_language)
        payload = whatsapp.template_message(to, name, language)
    else:
        payload = whatsapp.text_message(to, message.body or "")
    try:
        answer = senders.whatsapp.send(message.sender_number or "", payload)
    except whatsapp.NotSent as exc:
        return RetryLater(str(exc))
    except whatsapp.AnswerLost as exc:
        return Unknown(str(exc))
    outcome = whatsapp_outcome(answer.status, answer.body)
    if isinstance(outcome, RetryLater) and answer.retry_after is not None:
        return RetryLater(outcome.problem, timedelta(seconds=answer.retry_after))
    return outcome


def email_content(message: ClaimedMessage) -> tuple[str, str]:
    """``(subject, body)`` of an email: a template is the subscription's ``emails`` row whose
    ``campaignId`` is the template's name; a free-form message's subject is its first line."""
    if message.kind == "template":
        body = message.template_body or ""
        return message.template_subject or email_subject(body), body
    body = message.body or ""
    return email_subject(body), body


def _send_email(senders: MessageSenders, message: ClaimedMessage) -> Outcome:
    sender = senders.email
    missing = message.template_subject is None and message.template_body is None
    if message.kind == "template" and missing:
        return Failed(FailureReason.TEMPLATE_MISSING, None, "no email of that campaign id")
    subject, body = email_content(message)
    message_id = email_message_id(message.id, sender.from_address)
    mail = sender.build(message_id, message.email or "", subject, body)
    try:
        sender.send(mail)
    except smtp.NotSent as exc:
        if exc.code is not None:
            return smtp_outcome(exc.code, str(exc))
        return RetryLater(str(exc))
    except smtp.AnswerLost as exc:
        return Unknown(str(exc))
    return Sent(message_id)


def _record(
    session_factory: SessionFactory,
    report: DeliveryReport,
    message: ClaimedMessage,
    outcome: Outcome,
    moment: datetime,
) -> None:
    channel = message.channel.lower()
    with session_factory() as session:
        messages = CrmStore(session).messages
        if isinstance(outcome, Sent):
            subject = email_content(message)[0] if message.channel == EMAIL else None
            messages.record_sent(session, message, outcome.provider_id, at=moment, subject=subject)
            report.sent[channel] += 1
            return
        if isinstance(outcome, RetryLater):
            retry_at = next_attempt(message.attempts, moment, retry_after=outcome.retry_after)
            if retry_at is not None:
                messages.requeue(session, message.id, next_attempt_at=retry_at)
                report.retried[channel] += 1
                log_event(
                    "message_retry_later",
                    level=logging.WARNING,
                    message_id=str(message.id),
                    channel=channel,
                    attempts=message.attempts,
                    next_attempt_at=retry_at.isoformat(),
                    problem=outcome.problem,
                )
                return
            outcome = Failed(FailureReason.RETRIES_EXHAUSTED, None, outcome.problem)
        if isinstance(outcome, Unknown):
            outcome = Failed(FailureReason.SEND_OUTCOME_UNKNOWN, None, outcome.problem)
        messages.fail(session, message.id, outcome.reason, at=moment, code=outcome.code)
    report.count_failure(channel, outcome.reason)
    _log_failure(message, outcome.reason, outcome.code, outcome.detail)


def _release(
    session_factory: SessionFactory,
    message: ClaimedMessage,
    report: DeliveryReport,
    moment: datetime,
) -> None:
    """A claimed message of a channel that just failed transiently: not attempted, back to
    ``queued`` with the same back-off (its claim counted an attempt it did not have, so the
    back-off is one step longer at most)."""
    retry_at = next_attempt(message.attempts, moment) or moment
    with session_factory() as session:
        CrmStore(session).messages.requeue(session, message.id, next_attempt_at=retry_at)
    report.retried[message.channel.lower()] += 1


def _log_failure(message: ClaimedMessage, reason: str, code: str | None, detail: str) -> None:
    recipient = (
        mask_phone(message.phone) if message.channel == WHATSAPP else mask_email(message.email)
    )
    log_event(
        "message_failed",
        level=logging.WARNING,
        message_id=str(message.id),
        lead_id=str(message.lead_id),
        channel=message.channel.lower(),
        reason=str(reason),
        code=code or "",
        recipient=recipient,
        detail=detail,
    )


def message_backlog(
    session_factory: SessionFactory, *, now: datetime | None = None
) -> MessageBacklog:
    """The messages at a glance (every subscription): waiting by channel, due, the oldest
    waiting, and the last day's failures by reason."""
    moment = now or _utc_now()
    with session_factory() as session:
        return CrmStore(session).messages.backlog(
            session, now=moment, since=moment - timedelta(days=1)
        )


def requeue_failed_messages(
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    reasons: Iterable[str] = (),
    *,
    include_accepted: bool = False,
    now: datetime | None = None,
) -> dict[str, int]:
    """Put the subscription's failed messages back in the queue: those failed for one of
    ``reasons``, else for the default reasons (``requeued_reasons``); with
    ``include_accepted``, those the provider accepted before reporting the failure too. The
    next drain sends them, checking the window and the opt-out again. By old reason; raises
    :class:`RequeueRefused` for a reason that is unknown or may never be re-sent."""
    wanted = requeued_reasons(reasons)
    with session_factory() as session:
        counts = CrmStore(session).messages.requeue_failed(
            session,
            subscription_id,
            wanted,
            now=now or _utc_now(),
            include_accepted=include_accepted,
        )
    log_event(
        "messages_requeued",
        subscription_id=str(subscription_id),
        reasons=sorted(wanted),
        include_accepted=include_accepted,
        requeued=sum(counts.values()),
        by_reason=counts,
    )
    return counts


def message_status_counts(backlog: MessageBacklog) -> dict[str, int]:
    """Messages still waiting (queued or sending), by channel."""
    return {
        channel: statuses.get("queued", 0) + statuses.get("sending", 0)
        for channel, statuses in backlog.by_status.items()
    }


__all__ = [
    "DeliveryReport",
    "MessageSenders",
    "NotConfigured",
    "deliver_messages",
    "message_backlog",
    "message_status_counts",
    "requeue_failed_messages",
]
