"""Repository of ``report_deliveries`` (docs/reports.md, "Delivery"): claim before sending,
record after, so each report of a partition reaches each reader at most once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.base import BaseRepository
from morpheus_pipelines.tenants.store.models import ReportDelivery

# A new row, or a retryable failure claimed again; any other row (sent, unknown, a final
# failure, another run's claim) stays as it is and is not returned.
_CLAIM = text(
    """
    INSERT INTO report_deliveries AS d (report, partition_key, channel, recipient, status,
        retryable, attempts, run_id, claimed_at)
    SELECT :report, :partition_key, :channel, recipient, 'sending', false, 1, :run_id, :now
    FROM unnest(CAST(:recipients AS text[])) AS r(recipient)
    ON CONFLICT (report, partition_key, channel, recipient) DO UPDATE
    SET status = 'sending', retryable = false, attempts = d.attempts + 1, error = NULL,
        run_id = excluded.run_id, claimed_at = excluded.claimed_at, finished_at = NULL
    WHERE d.status = 'failed' AND d.retryable
    RETURNING recipient
    """
)


class ReportDeliveryRepository(BaseRepository[ReportDelivery]):
    model_class = ReportDelivery

    def claim(
        self,
        session: Session,
        *,
        report: str,
        partition_key: str,
        channel: str,
        recipients: Sequence[str],
        run_id: str,
        now: datetime,
    ) -> list[str]:
        """Mark the deliveries ``sending`` that are new or may be tried again; the
        recipients claimed (the caller commits before sending)."""
        if not recipients:
            return []
        rows = session.execute(
            _CLAIM,
            {
                "report": report,
                "partition_key": partition_key,
                "channel": channel,
                "recipients": list(recipients),
                "run_id": run_id,
                "now": now,
            },
        )
        return sorted(row.recipient for row in rows)

    def abandon_stale(self, session: Session, *, now: datetime, after: timedelta) -> int:
        """Claims older than ``after`` belong to a run that died while sending: ``unknown``,
        never sent again (the mail may have gone)."""
        result = session.execute(
            update(ReportDelivery)
            .where(ReportDelivery.status == "sending", ReportDelivery.claimed_at < now - after)
            .values(status="unknown", error="the run ended while sending", finished_at=now)
        )
        return result.rowcount or 0

    def record(
        self,
        session: Session,
        *,
        report: str,
        partition_key: str,
        channel: str,
        recipient: str,
        status: str,
        now: datetime,
        retryable: bool = False,
        error: str | None = None,
        message_id: str | None = None,
    ) -> None:
        session.execute(
            update(ReportDelivery)
            .where(
                ReportDelivery.report == report,
                ReportDelivery.partition_key == partition_key,
                ReportDelivery.channel == channel,
                ReportDelivery.recipient == recipient,
                ReportDelivery.status == "sending",
            )
            .values(
                status=status,
                retryable=retryable,
                error=error,
                message_id=message_id,
                finished_at=now,
            )
        )

    def counts(self, session: Session, *, report: str, partition_key: str) -> dict[str, int]:
        """The partition's deliveries by status (``failed_retryable`` apart)."""
        status = ReportDelivery.status
        rows = session.execute(
            select(status, ReportDelivery.retryable, func.count())
            .where(ReportDelivery.report == report, ReportDelivery.partition_key == partition_key)
            .group_by(status, ReportDelivery.retryable)
        )
        counts: dict[str, int] = {}
        for name, retryable, n in rows:
            key = "failed_retryable" if name == "failed" and retryable else name
            counts[key] = counts.get(key, 0) + n
        return counts

    def problems(
        self, session: Session, *, report: str, partition_key: str
    ) -> list[ReportDelivery]:
        """The partition's deliveries that did not arrive (failed or unknown)."""
        return list(
            session.scalars(
                select(ReportDelivery)
                .where(
                    ReportDelivery.report == report,
                    ReportDelivery.partition_key == partition_key,
                    ReportDelivery.status.in_(("failed", "unknown")),
                )
                .order_by(ReportDelivery.channel, ReportDelivery.recipient)
            )
        )
