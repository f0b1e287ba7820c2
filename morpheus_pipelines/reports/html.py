"""The reports as self-contained HTML pages for Sales managers: inline CSS, charts embedded as
base64 PNG, and all tenant text escaped."""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from datetime import UTC

from morpheus_pipelines.reports.daily import entered_sentence, late_warning, priority_table_rows
from morpheus_pipelines.reports.figures import (
    ENTERED,
    MAX_SHOWN_TENANTS,
    SNAPSHOT_STATUSES,
    DailySummary,
    SnapshotHealth,
    WeeklyMetrics,
)
from morpheus_pipelines.reports.text import (
    change_label,
    display_name,
    format_score,
    snapshot_line,
    table_cell,
)
from morpheus_pipelines.reports.weekly import week_headline, weekly_table

MAX_HTML_ROWS = MAX_SHOWN_TENANTS

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",sans-serif;
margin:2rem auto;max-width:1100px;padding:0 1rem;color:#222;line-height:1.45}
h1{margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.sub{color:#666;margin-top:0}.health{padding:.6rem .8rem;border-radius:4px}
.health-fresh{background:#e8f5e9}.health-stale{background:#fff8e1}
.health-unavailable{background:#ffebee}.warn{background:#fff8e1;padding:.6rem .8rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
th,td{border:1px solid #ddd;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.p-P0{color:#b2182b;font-weight:600}.p-P1{color:#d6604d;font-weight:600}
.foot{color:#777;font-size:.85rem;margin-top:2rem}img{max-width:100%}
"""


def html_page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
            *body,
            "</body></html>",
            "",
        ]
    )


def html_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()
) -> str:
    """A table of already-escaped cell HTML."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{cell}</td>' if i in numeric else f"<td>{cell}</td>"
            for i, cell in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


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
