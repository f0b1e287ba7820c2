"""What the re-engagement runs leave for the asset and the sensor to read: the fairness of the
rotation (docs/ownership.md, "Fairness"), the work still waiting and the write-backs by
status."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from morpheus_pipelines.crm.models import WriteBackStatus
from morpheus_pipelines.crm.rules.fairness import FairnessReport, RepShare, fairness
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory


def fairness_report(
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    window: timedelta,
    run_id: str | None = None,
) -> FairnessReport:
    """Round-robin assignments per rep over ``window``, against a perfect rotation; the
    result is recorded in ``sales_rep_fairness`` (each rep's row updated, none deleted)."""
    window_end = datetime.now(UTC)
    window_start = window_end - window
    with session_factory() as session:
        store = CrmStore(session)
        counts = store.assignments.round_robin_counts(session, subscription_id, window_start)
        report = fairness(
            [RepShare(c.sales_rep_id, c.email, c.eligible, c.assignments) for c in counts]
        )
        active = {c.sales_rep_id: c.is_active for c in counts}
        store.fairness.record_for_subscription(
            session,
            subscription_id,
            [
                {
                    "subscriptionId": subscription_id,
                    "salesRepId": row.rep_id,
                    "email": row.email,
                    "isActive": active[row.rep_id],
                    "assignments": row.assignments,
                    "expected": row.expected,
                    "deviation": row.deviation,
                    "windowStart": window_start,
                    "windowEnd": window_end,
                    "runId": run_id,
                }
                for row in report.rows
            ],
        )
    return report


@dataclass(frozen=True)
class Backlog:
    """Work waiting for ``reengagement_assignments``."""

    new_members: dict[str, int]
    newest_member_id: int | None
    pending_write_backs: int
    oldest_pending_id: int | None = None

    @property
    def empty(self) -> bool:
        return not self.new_members and not self.pending_write_backs


def backlog(session_factory: SessionFactory, subscription_id: uuid.UUID) -> Backlog:
    with session_factory() as session:
        store = CrmStore(session)
        return Backlog(
            store.members.count_new(session, subscription_id),
            store.members.newest_new_id(session, subscription_id),
            store.assignments.count_by_write_back_status(session, subscription_id).get(
                WriteBackStatus.PENDING.value, 0
            ),
            store.assignments.oldest_pending_id(session, subscription_id),
        )


def write_back_counts(
    session_factory: SessionFactory, subscription_id: uuid.UUID
) -> dict[str, int]:
    """Every write-back of the subscription counted by status (``pending``, ``done``, ...)."""
    with session_factory() as session:
        return CrmStore(session).assignments.count_by_write_back_status(session, subscription_id)
