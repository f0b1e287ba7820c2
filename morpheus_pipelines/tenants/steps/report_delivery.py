"""Delivering the Daily Summary and the Weekly Metrics to their readers (docs/reports.md,
"Delivery"): an email per manager (the report's HTML, charts inline) and, when configured, a
Slack message with the link. Each (report, partition, channel, recipient) at most once.

1. Claims older than an hour are ``unknown``: a run died between sending and recording, and
   the reader may have the report, so it is not sent again.
2. The deliveries not yet made (new, or a failure that certainly sent nothing) are claimed
   ``sending`` in one transaction, committed before anything is sent.
3. Each is sent and recorded in its own transaction: ``sent``; ``failed`` and retryable
   (nothing went: no server, SMTP 4xx, Slack 429/5xx), tried again by the next run; ``failed``
   final (SMTP 5xx, Slack 4xx); or ``unknown`` (the answer was lost).

The report is read back from ``MORPHEUS_REPORTS_URL``, where its asset published it, so the
delivery can run on any host.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parseaddr

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.slack import SlackWebhook
from morpheus_pipelines.platform.clients.smtp import AnswerLost, NotSent, SmtpSender
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.redaction import mask_email, mask_emails, redact
from morpheus_pipelines.platform.outputs import ReportOutputs
from morpheus_pipelines.tenants.reports.email import report_email
from morpheus_pipelines.tenants.store.store import TenantStore

EMAIL, SLACK = "email", "slack"
WEBHOOK = "webhook"  # the recipient of the Slack channel's one delivery
ABANDONED_AFTER = timedelta(hours=1)


@dataclass(frozen=True)
class DeliveredReport:
    """A report that is delivered: its title and where its page is under the URL."""

    name: str
    title: str
    page: Callable[[str], str]


REPORTS = {
    "daily_summary": DeliveredReport(
        "daily_summary", "APAC Daily Summary", lambda key: f"daily/{key}/summary.html"
    ),
    "weekly_metrics": DeliveredReport(
        "weekly_metrics", "APAC Weekly Metrics", lambda key: f"weekly/{key}/metrics.html"
    ),
}


@dataclass
class ReportSenders:
    """Who delivers: the managers' addresses over SMTP, and the Slack webhook; a missing
    setting is named in ``not_configured`` and that channel sends nothing."""

    recipients: tuple[str, ...] = ()
    email: SmtpSender | None = None
    slack: SlackWebhook | None = None
    not_configured: dict[str, str] = field(default_factory=dict)


@dataclass
class DeliveryReport:
    """What one delivery run did for one partition, and the partition's deliveries since."""

    report: str
    partition_key: str
    link: str
    attempted: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    abandoned: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, str]] = field(default_factory=list)
    not_configured: dict[str, str] = field(default_factory=dict)

    def count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1


def _utc_now() -> datetime:
    return datetime.now(UTC)


def deliver_report(
    session_factory: SessionFactory,
    outputs: ReportOutputs,
    senders: ReportSenders,
    *,
    report: str,
    partition_key: str,
    run_id: str,
    now: Callable[[], datetime] = _utc_now,
) -> DeliveryReport:
    """Deliver one partition of ``report`` (see the module)."""
    kind = REPORTS[report]
    page = kind.page(partition_key)
    result = DeliveryReport(
        report, partition_key, outputs.link(page).link, not_configured=senders.not_configured
    )
    with session_factory() as session:
        store = TenantStore(session)
        result.abandoned = store.deliveries.abandon_stale(session, now=now(), after=ABANDONED_AFTER)
    if senders.email is not None or senders.slack is not None:
        html = outputs.read_bytes(page).decode("utf-8")
        if senders.email is not None:
            _deliver_email(session_factory, senders, kind, html, result, run_id, now)
        if senders.slack is not None:
            _deliver_slack(session_factory, senders.slack, kind, result, run_id, now)
    with session_factory() as session:
        store = TenantStore(session)
        result.by_status = store.deliveries.counts(
            session, report=report, partition_key=partition_key
        )
        result.problems = [
            {
                "channel": row.channel,
                "recipient": mask_email(row.recipient) if row.channel == EMAIL else row.recipient,
                "status": row.status + (" (retried next run)" if row.retryable else ""),
                "error": row.error or "",
            }
            for row in store.deliveries.problems(
                session, report=report, partition_key=partition_key
            )
        ]
    return result


def _claim(
    session_factory: SessionFactory,
    result: DeliveryReport,
    channel: str,
    recipients: tuple[str, ...],
    run_id: str,
    moment: datetime,
) -> list[str]:
    with session_factory() as session:
        claimed = TenantStore(session).deliveries.claim(
            session,
            report=result.report,
            partition_key=result.partition_key,
            channel=channel,
            recipients=recipients,
            run_id=run_id,
            now=moment,
        )
    result.attempted[channel] = len(claimed)
    return claimed


def _record(
    session_factory: SessionFactory,
    result: DeliveryReport,
    channel: str,
    recipient: str,
    moment: datetime,
    *,
    status: str,
    retryable: bool = False,
    error: str | None = None,
    message_id: str | None = None,
) -> None:
    with session_factory() as session:
        TenantStore(session).deliveries.record(
            session,
            report=result.report,
            partition_key=result.partition_key,
            channel=channel,
            recipient=recipient,
            status=status,
            now=moment,
            retryable=retryable,
            error=mask_emails(redact(error)) if error else None,
            message_id=message_id,
        )
    outcome = f"{status}_retryable" if retryable else status
    result.count(f"{channel}_{outcome}")
    shown = mask_email(recipient) if channel == EMAIL else recipient
    log_event(
        "report_delivered" if status == "sent" else "report_delivery_failed",
        level=logging.INFO if status == "sent" else logging.WARNING,
        report=result.report,
        partition_key=result.partition_key,
        channel=channel,
        recipient=shown,
        status=outcome,
        problem=mask_emails(redact(error)) if error else "",
    )


def _message_id(report: str, partition_key: str, recipient: str, from_address: str) -> str:
    """The same for every attempt of one delivery, so a mail server can tell a repeat."""
    domain = parseaddr(from_address)[1].rpartition("@")[2] or "morpheus.invalid"
    digest = hashlib.sha256(recipient.encode()).hexdigest()[:16]
    return f"<{report}.{partition_key}.{digest}@{domain}>"


def _deliver_email(
    session_factory: SessionFactory,
    senders: ReportSenders,
    kind: DeliveredReport,
    html: str,
    result: DeliveryReport,
    run_id: str,
    now: Callable[[], datetime],
) -> None:
    sender = senders.email
    assert sender is not None
    subject = f"{kind.title} - {result.partition_key}"
    text = f"{subject}\n\nThe report is the HTML part of this email; it is also at {result.link}\n"
    for recipient in _claim(session_factory, result, EMAIL, senders.recipients, run_id, now()):
        message_id = _message_id(kind.name, result.partition_key, recipient, sender.from_address)
        mail = report_email(
            from_address=sender.from_address,
            to=recipient,
            subject=subject,
            html=html,
            text=text,
            message_id=message_id,
        )
        try:
            sender.send(mail)
        except NotSent as exc:
            # No server, or a 4xx: nothing went, the next run tries again; a 5xx is final.
            retryable = exc.code is None or exc.code < 500
            _record(
                session_factory,
                result,
                EMAIL,
                recipient,
                now(),
                status="failed",
                retryable=retryable,
                error=str(exc),
            )
            continue
        except AnswerLost as exc:
            _record(
                session_factory, result, EMAIL, recipient, now(), status="unknown", error=str(exc)
            )
            continue
        _record(
            session_factory, result, EMAIL, recipient, now(), status="sent", message_id=message_id
        )


def _deliver_slack(
    session_factory: SessionFactory,
    slack: SlackWebhook,
    kind: DeliveredReport,
    result: DeliveryReport,
    run_id: str,
    now: Callable[[], datetime],
) -> None:
    if not _claim(session_factory, result, SLACK, (WEBHOOK,), run_id, now()):
        return
    text = f"*{kind.title}* for {result.partition_key} is ready: <{result.link}|open the report>"
    try:
        slack.post(text)
    except NotSent as exc:
        _record(
            session_factory,
            result,
            SLACK,
            WEBHOOK,
            now(),
            status="failed",
            retryable=exc.code is None,
            error=str(exc),
        )
        return
    except AnswerLost as exc:
        _record(session_factory, result, SLACK, WEBHOOK, now(), status="unknown", error=str(exc))
        return
    _record(session_factory, result, SLACK, WEBHOOK, now(), status="sent")
