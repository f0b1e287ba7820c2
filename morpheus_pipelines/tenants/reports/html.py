"""The reports as self-contained HTML pages for Sales managers: inline CSS, charts embedded as
base64 PNG, and all tenant text escaped."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping
from datetime import UTC

from morpheus_pipelines.platform.rendering import html_page, html_table
from morpheus_pipelines.tenants.reports.daily import (
    entered_sentence,
    late_warning,
    note_heading,
    operations_notes,
    priority_table_rows,
)
from morpheus_pipelines.tenants.reports.figures import (
    ENTERED,
    MAX_SHOWN_TENANTS,
    SNAPSHOT_STATUSES,
    DailySummary,
    SnapshotHealth,
    WeeklyMetrics,
)
from morpheus_pipelines.tenants.reports.text import (
    change_label,
    display_name,
    format_score,
    snapshot_line,
    table_cell,
)
from morpheus_pipelines.tenants.reports.weekly import week_headline, weekly_table

MAX_HTML_ROWS = MAX_SHOWN_TENANTS


def _snapshot_html(snapshot: SnapshotHealth) -> str:
    status = snapshot.status if snapshot.status in SNAPSHOT_STATUSES else "unavailable"
    return f'<p class="health health-{status}">{html.escape(snapshot_line(snapshot))}</p>'


def render_daily_html(summary: DailySummary) -> str:
    """A self-contained page for Sales managers; all tenant text is escaped."""
    e = html.escape
    body = [
        "<h1>APAC Daily Summary</h1>",
        f'<p class="sub">Tenant day {e(summary.partition_key)} (China Standard Time) · '
        f"generated {summary.generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC</p>",
        _snapshot_html(summary.snapshot),
    ]
    if summary.late:
        body.append(f'<p class="warn">{e(late_warning(summary))}</p>')
    body += _operations_html(summary)
    body += [
        "<h2>Active tenants by priority</h2>",
        html_table(
            ["Priority", "Active tenants", "New on this day", "Changed on this day"],
            [tuple(e(c) for c in row) for row in priority_table_rows(summary)],
            numeric=(1, 2, 3),
        ),
        f"<p>{e(entered_sentence(summary.metrics[ENTERED]))}</p>",
        f"<h2>New and changed P0/P1 tenants ({summary.tenant_count:,})</h2>",
    ]
    if summary.tenant_count:
        rows = [
            (
                f'<span class="p-{e(r.priority)}">{e(r.priority)}</span>',
                e(change_label(r.change, r.previous_priority, r.priority)),
                e(display_name(r.name)),
                f"<code>{e(str(r.tenant_id))}</code>",
                e(r.why),
                e(format_score(r.total_score)),
            )
            for r in summary.tenants.head(MAX_HTML_ROWS).itertuples(index=False)
        ]
        body.append(
            html_table(
                ["Priority", "Change", "Tenant", "Tenant ID", "Why", "Score"], rows, numeric=(5,)
            )
        )
        if summary.tenant_count > MAX_HTML_ROWS:
            body.append(
                f"<p>…and {summary.tenant_count - MAX_HTML_ROWS:,} more: see summary.csv.</p>"
            )
    else:
        body.append("<p>No P0/P1 tenant is new or changed on this day.</p>")
    body.append(
        '<p class="foot">P0 = HubSpot target account; P1-P3 from the tenant score. '
        "Source: apac_active_tenants only - Sales-owned tenants are never included.</p>"
    )
    return html_page(f"APAC Daily Summary - {summary.partition_key}", body)


def _operations_html(summary: DailySummary) -> list[str]:
    """The Operations section, or nothing when the summary has no notes; all note text is
    escaped (a HubSpot error message is as untrusted as a tenant name)."""
    notes = operations_notes(summary)
    if not notes:
        return []
    body = ["<h2>Operations</h2>"]
    for note in notes:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in note.lines)
        body.append(
            f'<div class="note note-{note.severity}">'
            f"<p><strong>{html.escape(note_heading(note))}</strong></p>"
            + (f"<ul>{items}</ul>" if items else "")
            + "</div>"
        )
    return body


def render_weekly_html(weekly: WeeklyMetrics, charts: Mapping[str, bytes]) -> str:
    """A self-contained page: headline, charts (base64 PNG), per-day table."""
    e = html.escape
    days = f"{weekly.days[0]:%Y-%m-%d} (Mon) to {weekly.days[-1]:%Y-%m-%d} (Sun)"
    body = [
        "<h1>APAC Weekly Metrics</h1>",
        f'<p class="sub">Week {e(days)}, China Standard Time · generated '
        f"{weekly.generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC</p>",
        *(f"<p>{e(line)}</p>" for line in week_headline(weekly)),
    ]
    for name, png in charts.items():
        encoded = base64.b64encode(png).decode("ascii")
        body.append(f'<p><img alt="{e(name)}" src="data:image/png;base64,{encoded}"></p>')
    table = weekly_table(weekly)
    headers = [c.replace("_", " ") for c in table.columns]
    rows = [tuple(e(table_cell(v)) for v in record) for record in table.itertuples(index=False)]
    body += [
        "<h2>Per day</h2>",
        html_table(headers, rows, numeric=tuple(range(2, len(headers)))),
        '<p class="foot">Empty cells: no Daily Summary for that day. Week row: new, changed '
        "and entered are summed; tenant counts are those of the last day with data. Source: "
        "the stored Daily Summaries (apac_active_tenants only - Sales-owned tenants are never "
        "included).</p>",
    ]
    return html_page(f"APAC Weekly Metrics - week of {weekly.week_key}", body)
