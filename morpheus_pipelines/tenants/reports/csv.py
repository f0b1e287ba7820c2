"""The reports as CSV for spreadsheets: every listed tenant, the day's metrics and operations
notes, the week's per-day table. Cells a spreadsheet would run as a formula are neutralised
(:func:`~.text.csv_cell`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

import pandas as pd

from morpheus_pipelines.platform.observability.redaction import mask_emails
from morpheus_pipelines.platform.rendering import csv_cell
from morpheus_pipelines.tenants.reports.daily import operations_notes
from morpheus_pipelines.tenants.reports.figures import DailySummary, WeeklyMetrics
from morpheus_pipelines.tenants.reports.text import format_score
from morpheus_pipelines.tenants.reports.weekly import weekly_table

DAILY_CSV_HEADER = (
    "partition",
    "priority",
    "change",
    "previous_priority",
    "tenant_id",
    "name",
    "why",
    "reason",
    "hubspot_match_method",
    "hubspot_company_id",
    "total_score",
)


def _csv_text(header: Sequence[str] | None, rows: Iterable[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if header is not None:
        writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell("" if v is None else v) for v in row])
    return buffer.getvalue()


def _csv_value(value: object) -> object:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else round(value, 2)
    return value


def daily_csv_header() -> str:
    """The first line of ``summary.csv``."""
    return _csv_text(DAILY_CSV_HEADER, ())


def daily_csv_rows(partition_key: str, tenants: pd.DataFrame) -> str:
    """The ``summary.csv`` lines of some listed tenants (rows of
    :class:`~.daily.ListedTenants`): the file is written chunk by chunk, every listed tenant
    in it, not only the first."""
    rows = (
        (
            partition_key,
            r.priority,
            r.change,
            r.previous_priority,
            r.tenant_id,
            mask_emails(r.name),
            r.why,
            r.reason,
            r.hubspot_match_method,
            r.hubspot_company_id,
            None if r.total_score is None else format_score(r.total_score),
        )
        for r in tenants.itertuples(index=False)
    )
    return _csv_text(None, rows)


def render_daily_metrics_csv(summary: DailySummary) -> str:
    rows = [
        (summary.partition_key, m, d, _csv_value(float(v)))
        for m, d, v in summary.metrics_rows().itertuples(index=False)
    ]
    return _csv_text(("partition", "metric", "dimension", "value"), rows)


NOTES_CSV_HEADER = ("partition", "severity", "title", "line")


def render_daily_notes_csv(summary: DailySummary) -> str:
    """``notes.csv``: one row per line of each operations note, most urgent note first (a
    note without lines has one row with an empty ``line``). Only the header when the summary
    has no notes, so a re-run without notes leaves none of an earlier run's behind."""
    rows = [
        (summary.partition_key, note.severity, note.title, line)
        for note in operations_notes(summary)
        for line in (note.lines or ("",))
    ]
    return _csv_text(NOTES_CSV_HEADER, rows)


def render_weekly_csv(weekly: WeeklyMetrics) -> str:
    """The per-day table (seven days plus ``week``); empty cells where a day has no data."""
    table = weekly_table(weekly)
    rows = [
        [weekly.week_key, *(_csv_value(v) for v in record)]
        for record in table.itertuples(index=False, name=None)
    ]
    return _csv_text(["week", *table.columns], rows)
