"""Publishing the Daily Summary and the Weekly Metrics: read the figures, build the report,
store its rows, write its files (docs/reports.md).

The Daily Summary reads ``apac_active_tenants`` only (through ``repositories.reports``):
Sales-owned tenants never appear in a report, whatever their priority.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.reports.daily import build_daily_summary
from morpheus_pipelines.reports.figures import ActiveTenantFigures, DailySummary, WeeklyMetrics
from morpheus_pipelines.reports.files import write_daily_report, write_weekly_report
from morpheus_pipelines.reports.weekly import build_weekly_metrics, week_days
from morpheus_pipelines.repositories import (
    DailySummaryRepository,
    RoutingDecisionRepository,
    WeeklyMetricsRepository,
)
from morpheus_pipelines.services.hubspot_snapshot import read_snapshot_state

_daily = DailySummaryRepository()
_weekly = WeeklyMetricsRepository()
_decisions = RoutingDecisionRepository()


@dataclass
class DailyPublication:
    """One day's Daily Summary as published, or kept (``summary`` None) because a newer
    partition owns the live buckets and the day's summary is already stored."""

    partition_key: str
    summary: DailySummary | None
    files: dict[str, Path]
    rows_written: int = 0
    live_partition: str | None = None

    @property
    def kept(self) -> bool:
        return self.summary is None


@dataclass
class WeeklyPublication:
    week_key: str
    metrics: WeeklyMetrics
    files: dict[str, Path]
    rows_written: int


def read_daily_summary(
    session_factory: SessionFactory, *, list_id: str, partition_key: str
) -> DailySummary:
    """The Daily Summary of the partition from the Active table as it is now, read in one
    consistent snapshot of the database."""
    generated_at = datetime.now(UTC)
    with session_factory() as session:
        _daily.begin_consistent_read(session)
        figures = ActiveTenantFigures(
            changed=_daily.changed_top_priorities(session, partition_key=partition_key),
            priority_counts=_daily.priority_counts(session),
            reason_counts=_daily.priority_reason_counts(session),
            match_method_counts=_daily.match_method_counts(session),
            entered_counts=_daily.entered_counts(session, partition_key=partition_key),
            transitions=_daily.priority_transitions(session, partition_key=partition_key),
            retired=_daily.retired_count(session, partition_key=partition_key),
            state_partition=_daily.state_partition(session),
        )
        snapshot = read_snapshot_state(session, list_id, now=generated_at)
    return build_daily_summary(partition_key, figures, snapshot, generated_at=generated_at)


def publish_daily_summary(
    session_factory: SessionFactory,
    *,
    list_id: str,
    partition_key: str,
    run_id: str,
    home: str | Path,
) -> DailyPublication:
    """Build, store (rows replaced, unchanged rows kept) and write the day's Daily Summary.

    A day older than the newest routed partition whose summary is already stored is kept as
    it is: the Active table no longer shows that day, and what Sales was told stays
    (docs/partitions.md). A day never summarised gets a summary of the current state, which
    says so (``late``)."""
    with session_factory() as session:
        newer = _decisions.superseding_partition(session, partition_key=partition_key)
        if newer is not None and _daily.has_partition(session, partition_key=partition_key):
            return DailyPublication(partition_key, None, {}, live_partition=newer)
    summary = read_daily_summary(session_factory, list_id=list_id, partition_key=partition_key)
    with session_factory() as session:
        written = _daily.replace_partition(
            session, summary.tenant_rows(), partition_key=partition_key, run_id=run_id
        )
        written += _daily.replace_metrics(
            session, summary.metrics_rows(), partition_key=partition_key, run_id=run_id
        )
    files = write_daily_report(summary, home)
    return DailyPublication(partition_key, summary, files, written, live_partition=newer)


def publish_weekly_metrics(
    session_factory: SessionFactory, *, week_key: str, run_id: str, home: str | Path
) -> WeeklyPublication:
    """The week's metrics from its stored Daily Summary metrics: stored and written."""
    days = [day.isoformat() for day in week_days(week_key)]
    with session_factory() as session:
        daily = _daily.metrics_for_partitions(session, days)
    weekly = build_weekly_metrics(week_key, daily)
    with session_factory() as session:
        written = _weekly.replace_week(session, weekly.rows(), week_key=week_key, run_id=run_id)
    files = write_weekly_report(weekly, home)
    return WeeklyPublication(week_key, weekly, files, written)
