"""The reports as Markdown for Dagster metadata: the Daily Summary (its first tenant rows) and
the Weekly Metrics. Every piece of text is escaped with :func:`~.text.md_escape`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from morpheus_pipelines.platform.rendering import md_escape
from morpheus_pipelines.tenants.reports.daily import (
    entered_sentence,
    late_warning,
    note_heading,
    operations_notes,
    priority_table_rows,
)
from morpheus_pipelines.tenants.reports.figures import ENTERED, DailySummary, WeeklyMetrics
from morpheus_pipelines.tenants.reports.text import (
    change_label,
    display_name,
    snapshot_line,
    table_cell,
)
from morpheus_pipelines.tenants.reports.weekly import week_headline, weekly_table

MAX_MARKDOWN_ROWS = 25


def _files_line(files: Mapping[str, Path | str]) -> str:
    """Links to the published files (a local path is shown as it is)."""
    shown = (
        f"[{str(p).rsplit('/', 1)[-1]}]({p})" if "://" in str(p) else f"`{p}`"
        for p in files.values()
    )
    return "Files: " + ", ".join(shown)


def render_daily_markdown(
    summary: DailySummary, *, files: Mapping[str, Path | str] | None = None
) -> str:
    """The Daily Summary as Markdown for Dagster metadata (first rows of the tenant list)."""
    lines = [
        f"### APAC Daily Summary - {summary.partition_key} (CST)",
        "",
        md_escape(snapshot_line(summary.snapshot)),
        "",
    ]
    if summary.late:
        lines += [f"**{md_escape(late_warning(summary))}**", ""]
    lines += _operations_markdown(summary)
    lines += [
        "| priority | active tenants | new | changed |",
        "|---|---:|---:|---:|",
        *(f"| {p} | {a} | {n} | {c} |" for p, a, n, c in priority_table_rows(summary)),
        "",
        md_escape(entered_sentence(summary.metrics[ENTERED])),
        "",
        f"**New and changed P0/P1 tenants: {summary.tenant_count}**",
        "",
    ]
    if summary.tenant_count:
        lines += ["| priority | change | tenant | tenant id | why |", "|---|---|---|---|---|"]
        for row in summary.tenants.head(MAX_MARKDOWN_ROWS).itertuples(index=False):
            change = change_label(row.change, row.previous_priority, row.priority)
            lines.append(
                f"| {row.priority} | {md_escape(change)} "
                f"| {md_escape(display_name(row.name))} | {md_escape(row.tenant_id)} "
                f"| {md_escape(row.why)} |"
            )
        if summary.tenant_count > MAX_MARKDOWN_ROWS:
            lines.append(
                f"\n_…and {summary.tenant_count - MAX_MARKDOWN_ROWS:,} more in summary.html / "
                "summary.csv._"
            )
    else:
        lines.append("No P0/P1 tenant is new or changed on this day.")
    if files:
        lines += ["", _files_line(files)]
    return "\n".join(lines)


def _operations_markdown(summary: DailySummary) -> list[str]:
    """The Operations section, or nothing when the summary has no notes."""
    notes = operations_notes(summary)
    if not notes:
        return []
    lines = ["#### Operations", ""]
    for note in notes:
        lines.append(f"**{md_escape(note_heading(note))}**")
        lines += [f"- {md_escape(line)}" for line in note.lines]
        lines.append("")
    return lines


def render_weekly_markdown(
    weekly: WeeklyMetrics, *, files: Mapping[str, Path | str] | None = None
) -> str:
    table = weekly_table(weekly)
    shown = ["day", "active_P0", "active_P1", "active_P2", "active_P3", "new_P0", "new_P1"]
    shown += ["changed_P0", "changed_P1", "entered_new", "entered_sales_owned"]
    lines = [
        f"### APAC Weekly Metrics - week of {weekly.week_key} (Mon-Sun, CST)",
        "",
        *(md_escape(line) + "  " for line in week_headline(weekly)),
        "",
        "| " + " | ".join(c.replace("_", " ") for c in shown) + " |",
        "|" + "---|" + "---:|" * (len(shown) - 1),
    ]
    for record in table[shown].itertuples(index=False, name=None):
        lines.append("| " + " | ".join(md_escape(table_cell(v)) or "-" for v in record) + " |")
    lines += ["", "Week row: event counts summed, tenant counts as of the last day with data."]
    if files:
        lines += ["", _files_line(files)]
    return "\n".join(lines)
