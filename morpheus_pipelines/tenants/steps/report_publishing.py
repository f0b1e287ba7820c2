"""Publishing the Daily Summary and the Weekly Metrics: read the figures, build the report,
store its rows, write its files (docs/reports.md).

The Daily Summary reads ``apac_active_tenants`` only (through ``tenants.store.reports``):
Sales-owned tenants never appear in a report, whatever their priority.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.rendering import atomic_text_file
from morpheus_pipelines.platform.report_notes import OperationsNote
from morpheus_pipelines.platform.store.copying import frame_records
from morpheus_pipelines.tenants.reports.csv import daily_csv_header, daily_csv_rows
from morpheus_pipelines.tenants.reports.daily import ListedTenants, build_daily_summary
from morpheus_pipelines.tenants.reports.figures import (
    SUMMARY_TENANT_COLUMNS,
    DailySummary,
    WeeklyMetrics,
)
from morpheus_pipelines.tenants.reports.files import (
    daily_tenants_csv_path,
    write_daily_report,
    write_weekly_report,
)
from morpheus_pipelines.tenants.reports.weekly import build_weekly_metrics, week_days
from morpheus_pipelines.tenants.steps.hubspot_snapshot import read_snapshot_state
from morpheus_pipelines.tenants.store.store import TenantStore


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


def publish_daily_summary(
    session_factory: SessionFactory,
    *,
    list_id: str,
    partition_key: str,
    run_id: str,
    home: str | Path,
    chunk_size: int = 10_000,
    notes: Sequence[OperationsNote] = (),
) -> DailyPublication:
    """Build, store (rows replaced, unchanged rows kept) and write the day's Daily Summary.

    ``notes`` are its Operations section (what a person must act on, gathered by the caller
    when the summary runs): rendered in ``summary.html``, ``summary.md``, ``notes.csv`` and the
    Markdown metadata, never stored as rows, so they change no stored figure. No notes, no
    section.

    The figures come from one consistent snapshot of the Active table. The listed tenants
    stream from it in chunks of ``chunk_size`` straight into the table's staging and
    ``summary.csv``; only their counts and the first rows that the HTML shows stay in memory,
    so a first day that lists every tenant costs no more memory than an ordinary one.

    A day older than the newest routed partition whose summary is already stored is kept as
    it is, files and notes included: the Active table no longer shows that day, and what
    Sales was told stays (docs/partitions.md). A day never summarised gets a summary of the
    current state, which says so (``late``)."""
    with session_factory() as session:
        store = TenantStore(session)
        newer = store.decisions.superseding_partition(session, partition_key=partition_key)
        if newer is not None and store.daily.has_partition(session, partition_key=partition_key):
            return DailyPublication(partition_key, None, {}, live_partition=newer)
    generated_at = datetime.now(UTC)
    with (
        atomic_text_file(daily_tenants_csv_path(home, partition_key)) as csv_file,
        session_factory() as read,
        session_factory() as write,
    ):
        summary, written = _store_daily_summary(
            TenantStore(read),
            TenantStore(write),
            csv_file,
            list_id=list_id,
            partition_key=partition_key,
            run_id=run_id,
            chunk_size=chunk_size,
            generated_at=generated_at,
            notes=notes,
        )
    files = write_daily_report(summary, home)
    return DailyPublication(partition_key, summary, files, written, live_partition=newer)


def _store_daily_summary(
    read: TenantStore,
    write: TenantStore,
    csv_file: TextIO,
    *,
    list_id: str,
    partition_key: str,
    run_id: str,
    chunk_size: int,
    generated_at: datetime,
    notes: Sequence[OperationsNote],
) -> tuple[DailySummary, int]:
    """Build the summary from one consistent read of the Active table while its listed
    tenants stream into ``write`` and ``csv_file``; returns it and the rows written."""
    listed = ListedTenants()
    read.daily.begin_consistent_read(read.session)
    figures = read.daily.active_figures(read.session, partition_key=partition_key)
    snapshot = read_snapshot_state(read.session, list_id, now=generated_at)
    csv_file.write(daily_csv_header())

    def listed_records() -> Iterator[tuple[Any, ...]]:
        chunks = read.daily.changed_top_priorities(
            read.session, partition_key=partition_key, chunk_size=chunk_size
        )
        for chunk in chunks:
            rows = listed.add(chunk)
            csv_file.write(daily_csv_rows(partition_key, rows))
            yield from frame_records(rows, SUMMARY_TENANT_COLUMNS)

    written = write.daily.replace_partition(
        write.session, listed_records(), partition_key=partition_key, run_id=run_id
    )
    summary = build_daily_summary(
        partition_key, figures, listed, snapshot, generated_at=generated_at, notes=notes
    )
    written += write.daily.replace_metrics(
        write.session, summary.metrics_rows(), partition_key=partition_key, run_id=run_id
    )
    return summary, written


def publish_weekly_metrics(
    session_factory: SessionFactory, *, week_key: str, run_id: str, home: str | Path
) -> WeeklyPublication:
    """The week's metrics from its stored Daily Summary metrics: stored and written."""
    days = [day.isoformat() for day in week_days(week_key)]
    with session_factory() as session:
        daily = TenantStore(session).daily.metrics_for_partitions(session, days)
    weekly = build_weekly_metrics(week_key, daily)
    with session_factory() as session:
        written = TenantStore(session).weekly.replace_week(
            session, weekly.rows(), week_key=week_key, run_id=run_id
        )
    files = write_weekly_report(weekly, home)
    return WeeklyPublication(week_key, weekly, files, written)
