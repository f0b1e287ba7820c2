"""Daily Summary and Weekly Metrics: report content and its renderings (002 §3.4).

Plain Python, pandas and matplotlib; no Dagster and no database. The assets read the figures
through ``repositories.reports`` (``apac_active_tenants`` only), build a :class:`DailySummary`
or :class:`WeeklyMetrics` here, store its rows, and write the files this module renders:

* Markdown for Dagster metadata;
* self-contained HTML for Sales managers (charts embedded as base64 PNG);
* CSV for spreadsheets (formula-like cells neutralised);
* PNG charts for the week.

Tenant-provided text (names) is untrusted: it is HTML-escaped in HTML, escaped in Markdown,
and any email-shaped text in it is masked everywhere. Customer email columns are never read.

Metrics are ``(metric, dimension, value)`` per day. Two kinds aggregate differently over a
week: *state* metrics (tenants per priority, per match method, per reason) describe the
Active table when the day was summarised, so a week reports its last day with data; *event*
metrics (new and changed P0/P1, tenants entering Active, priority transitions, snapshot
status) happen on a day, so a week sums them. Week rows are stored on the week's first day
with the metric name prefixed ``week_``.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from morpheus_pipelines.observability.redaction import mask_emails
from morpheus_pipelines.repositories.reports import SUMMARY_TENANT_COLUMNS
from morpheus_pipelines.services.hubspot_snapshot import SnapshotState

PRIORITIES = ("P0", "P1", "P2", "P3")
TOP_PRIORITIES = ("P0", "P1")
PRIORITY_DIMENSIONS = (*PRIORITIES, "unscored")
MATCH_METHODS = ("portal_id", "account_id", "email_domain", "official_website")
MATCH_DIMENSIONS = (*MATCH_METHODS, "none")
REASON_DIMENSIONS = ("hubspot_target_account", "score", "unscored")
ENTERED_DIMENSIONS = ("new", "sales_owned")
SNAPSHOT_STATUSES = ("fresh", "stale", "unavailable")

ACTIVE_TENANTS = "active_tenants"
BY_PRIORITY = "tenants_by_priority"
BY_REASON = "tenants_by_priority_reason"
BY_MATCH_METHOD = "tenants_by_match_method"
NEW_TOP = "new_top_priority"
CHANGED_TOP = "changed_top_priority"
ENTERED = "entered_active"
ENTERED_TOP = "entered_top_priority"
DOWNGRADED_TOP = "downgraded_from_top_priority"
RETIRED = "retired_active"
TRANSITIONS = "priority_transitions"
SNAPSHOT_STATUS = "snapshot_status"

# State of the Active table when the day was summarised: a week reports its last day.
STATE_METRICS = (ACTIVE_TENANTS, BY_PRIORITY, BY_REASON, BY_MATCH_METHOD)
# Events of the day: a week sums them (snapshot_status sums to days per status).
EVENT_METRICS = (
    NEW_TOP,
    CHANGED_TOP,
    ENTERED,
    ENTERED_TOP,
    DOWNGRADED_TOP,
    RETIRED,
    TRANSITIONS,
    SNAPSHOT_STATUS,
)
WEEK_PREFIX = "week_"

REASON_LABELS = {
    "hubspot_target_account": "HubSpot target account",
    "score": "score",
    "unknown": "reason not recorded",
}
ENTERED_LABELS = {"new": "new tenants", "sales_owned": "moved from Sales-owned"}
PRIORITY_COLOURS = {
    "P0": "#b2182b",
    "P1": "#ef8a62",
    "P2": "#67a9cf",
    "P3": "#2166ac",
    "unscored": "#bdbdbd",
}
MATCH_COLOURS = {
    "portal_id": "#1b9e77",
    "account_id": "#d95f02",
    "email_domain": "#7570b3",
    "official_website": "#e7298a",
}
MAX_HTML_ROWS = 2000
MAX_MARKDOWN_ROWS = 25
MAX_NAME_LENGTH = 120

_KEY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Tenant text only ever lands inside table cells, where these are the characters that act.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


# -- text helpers -----------------------------------------------------------------------------


def display_name(value: object, *, limit: int = MAX_NAME_LENGTH) -> str:
    """A tenant name fit for a report: emails masked, control characters removed, shortened."""
    text = "".join(ch if ch.isprintable() else " " for ch in mask_emails(value)).strip()
    if not text:
        return "(no name)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def md_escape(value: object) -> str:
    """Text safe inside Markdown (tables included): HTML-escaped, specials backslashed."""
    text = html.escape(str(value), quote=False).replace("\n", " ").replace("\r", " ")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def csv_cell(value: object) -> object:
    """A CSV cell that a spreadsheet will not execute (``=cmd()`` becomes ``'=cmd()``)."""
    if isinstance(value, str) and value.startswith(_CSV_FORMULA_START):
        return "'" + value
    return value


def format_score(value: object) -> str:
    """``78.50`` → ``"78.5"``, ``80.00`` → ``"80"``, missing → ``"n/a"``."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "n/a"
    number = Decimal(str(value)).quantize(Decimal("0.01"))
    text = format(number, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_count(value: float | int) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def why(reason: str | None, match_method: str | None, company_id: str | None, score: object) -> str:
    """Why a tenant has its priority, in words for Sales managers."""
    if reason == "hubspot_target_account":
        evidence = []
        if match_method:
            evidence.append(f"match: {match_method}")
        if company_id:
            evidence.append(f"company {company_id}")
        suffix = f" ({', '.join(evidence)})" if evidence else ""
        return f"HubSpot target account{suffix}"
    if reason == "score":
        return f"score {format_score(score)}"
    return REASON_LABELS["unknown"]


def change_label(change: str, previous: str | None, priority: str) -> str:
    """What happened to a listed tenant, in words (``change`` as stored)."""
    if change == "entered":
        return f"entered Active from Sales-owned as {priority}"
    if change == "new" or not previous:
        return "new"
    if change == "downgraded":
        return f"{previous} → {priority} (left P0/P1)"
    return f"{previous} → {priority}"


def check_key(key: str) -> str:
    """A partition or week key (``YYYY-MM-DD``); anything else never becomes a path."""
    if not _KEY.match(key):
        raise ValueError(f"not a daily/weekly partition key: {key!r}")
    return key


# -- snapshot health --------------------------------------------------------------------------


def snapshot_line(snapshot: SnapshotState) -> str:
    """One line on the HubSpot target snapshot that routing used (002 §5.4)."""
    if snapshot.status == "unavailable" or snapshot.synced_at is None:
        return (
            "HubSpot target snapshot: UNAVAILABLE - no successful sync yet, so no tenant "
            "could be matched to a HubSpot target account."
        )
    synced = snapshot.synced_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    age = "" if snapshot.age_seconds is None else f", {snapshot.age_seconds / 3600:.1f} h old"
    if snapshot.status == "stale":
        return (
            f"HubSpot target snapshot: STALE - the last sync attempt failed; routing used the "
            f"snapshot of {synced}{age} (sync {snapshot.sync_id})."
        )
    return (
        f"HubSpot target snapshot: fresh - last successful sync {synced}{age} "
        f"(sync {snapshot.sync_id})."
    )


# -- metrics ----------------------------------------------------------------------------------


def _filled(counts: Mapping[str, int], dimensions: Sequence[str]) -> dict[str, int]:
    """Known dimensions first (0 when absent), then any unexpected ones, sorted."""
    filled = {d: int(counts.get(d, 0)) for d in dimensions}
    filled.update({str(k): int(v) for k, v in sorted(counts.items()) if k not in filled})
    return filled


def metrics_frame(metrics: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """``{metric: {dimension: value}}`` as rows ``metric, dimension, value``."""
    rows = [
        (metric, dimension, value)
        for metric, values in metrics.items()
        for dimension, value in values.items()
    ]
    return pd.DataFrame(rows, columns=["metric", "dimension", "value"])


# -- Daily Summary ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ActiveTenantFigures:
    """What the Daily Summary reads from ``apac_active_tenants`` (see ``repositories.reports``)."""

    changed: pd.DataFrame  # SUMMARY_TENANT_COLUMNS
    priority_counts: Mapping[str, int]
    reason_counts: Mapping[str, int]
    match_method_counts: Mapping[str, int]
    entered_counts: Mapping[str, int]
    transitions: Mapping[str, int]
    state_partition: str | None = None
    retired: Mapping[str, int] = field(default_factory=dict)


@dataclass
class DailySummary:
    partition_key: str
    generated_at: datetime
    snapshot: SnapshotState
    tenants: pd.DataFrame  # SUMMARY_TENANT_COLUMNS + why (names masked)
    metrics: dict[str, dict[str, float]]
    state_partition: str | None = None

    @property
    def late(self) -> bool:
        """The Active table already reflects a later partition (a late re-run)."""
        return self.state_partition is not None and self.state_partition > self.partition_key

    def metrics_rows(self) -> pd.DataFrame:
        return metrics_frame(self.metrics)

    def tenant_rows(self) -> pd.DataFrame:
        """Rows for ``apac_daily_summary_tenants`` (``SUMMARY_TENANT_COLUMNS``)."""
        return self.tenants[list(SUMMARY_TENANT_COLUMNS)]

    def counts(self) -> dict[str, Any]:
        """The figures for Dagster metadata."""
        return {
            "new_p0": int(self.metrics[NEW_TOP]["P0"]),
            "new_p1": int(self.metrics[NEW_TOP]["P1"]),
            "changed_p0": int(self.metrics[CHANGED_TOP]["P0"]),
            "changed_p1": int(self.metrics[CHANGED_TOP]["P1"]),
            "active_tenants": int(self.metrics[ACTIVE_TENANTS]["all"]),
            "tenants_by_priority": {k: int(v) for k, v in self.metrics[BY_PRIORITY].items()},
            "entered_active": {k: int(v) for k, v in self.metrics[ENTERED].items()},
            "snapshot_status": self.snapshot.status,
        }


def summary_tenants(changed: pd.DataFrame) -> pd.DataFrame:
    """The listed rows as stored and shown: missing values as None, names masked, and ``why``
    in words. ``change`` is ``new``, ``changed``, ``downgraded`` (out of P0/P1) or
    ``entered`` (from Sales-owned with a carried P0/P1)."""
    frame = changed.astype(object).where(changed.notna(), None).reset_index(drop=True)
    frame["name"] = [None if n is None else mask_emails(n) for n in frame["name"]]
    frame["why"] = [
        why(r, m, c, s)
        for r, m, c, s in zip(
            frame["reason"],
            frame["hubspot_match_method"],
            frame["hubspot_company_id"],
            frame["total_score"],
            strict=True,
        )
    ]
    return frame


def build_daily_summary(
    partition_key: str,
    figures: ActiveTenantFigures,
    snapshot: SnapshotState,
    *,
    generated_at: datetime | None = None,
) -> DailySummary:
    """The Daily Summary of one partition from the figures read for it."""
    check_key(partition_key)
    tenants = summary_tenants(figures.changed)
    by_change = {
        change: tenants.loc[tenants["change"] == change, "priority"].value_counts().to_dict()
        for change in ("new", "changed", "entered")
    }
    downgraded = tenants.loc[tenants["change"] == "downgraded", "previous_priority"]
    priority_counts = _filled(figures.priority_counts, PRIORITY_DIMENSIONS)
    metrics: dict[str, dict[str, float]] = {
        ACTIVE_TENANTS: {"all": sum(priority_counts.values())},
        BY_PRIORITY: priority_counts,
        BY_REASON: _filled(figures.reason_counts, REASON_DIMENSIONS),
        BY_MATCH_METHOD: _filled(figures.match_method_counts, MATCH_DIMENSIONS),
        NEW_TOP: _filled(by_change["new"], TOP_PRIORITIES),
        CHANGED_TOP: _filled(by_change["changed"], TOP_PRIORITIES),
        ENTERED: _filled(figures.entered_counts, ENTERED_DIMENSIONS),
        ENTERED_TOP: _filled(by_change["entered"], TOP_PRIORITIES),
        DOWNGRADED_TOP: _filled(downgraded.value_counts().to_dict(), TOP_PRIORITIES),
        RETIRED: _filled(figures.retired, ("all",)),
        TRANSITIONS: _filled(figures.transitions, ()),
        SNAPSHOT_STATUS: {s: int(s == snapshot.status) for s in SNAPSHOT_STATUSES},
    }
    return DailySummary(
        partition_key=partition_key,
        generated_at=generated_at or datetime.now(UTC),
        snapshot=snapshot,
        tenants=tenants,
        metrics=metrics,
        state_partition=figures.state_partition,
    )


def _late_warning(summary: DailySummary) -> str:
    return (
        f"Note: the Active table already includes partition {summary.state_partition}; "
        f"counts show that later state, and tenants whose priority changed again since "
        f"{summary.partition_key} are not listed."
    )


def _priority_table_rows(summary: DailySummary) -> list[tuple[str, str, str, str]]:
    rows = []
    for priority in PRIORITY_DIMENSIONS:
        top = priority in TOP_PRIORITIES
        rows.append(
            (
                priority,
                format_count(summary.metrics[BY_PRIORITY].get(priority, 0)),
                format_count(summary.metrics[NEW_TOP][priority]) if top else "-",
                format_count(summary.metrics[CHANGED_TOP][priority]) if top else "-",
            )
        )
    rows.append(
        (
            "Total",
            format_count(summary.metrics[ACTIVE_TENANTS]["all"]),
            format_count(sum(summary.metrics[NEW_TOP].values())),
            format_count(sum(summary.metrics[CHANGED_TOP].values())),
        )
    )
    return rows


def _entered_sentence(entered: Mapping[str, float]) -> str:
    parts = [f"{format_count(entered.get(k, 0))} {label}" for k, label in ENTERED_LABELS.items()]
    parts += [f"{format_count(v)} {k}" for k, v in entered.items() if k not in ENTERED_LABELS]
    return "Entered the Active list on this day: " + ", ".join(parts) + "."


def render_daily_markdown(summary: DailySummary, *, files: Mapping[str, Path] | None = None) -> str:
    """The Daily Summary as Markdown for Dagster metadata (first rows of the tenant list)."""
    lines = [
        f"### APAC Daily Summary - {summary.partition_key} (CST)",
        "",
        md_escape(snapshot_line(summary.snapshot)),
        "",
    ]
    if summary.late:
        lines += [f"**{md_escape(_late_warning(summary))}**", ""]
    lines += [
        "| priority | active tenants | new | changed |",
        "|---|---:|---:|---:|",
        *(f"| {p} | {a} | {n} | {c} |" for p, a, n, c in _priority_table_rows(summary)),
        "",
        md_escape(_entered_sentence(summary.metrics[ENTERED])),
        "",
        f"**New and changed P0/P1 tenants: {len(summary.tenants)}**",
        "",
    ]
    if len(summary.tenants):
        lines += ["| priority | change | tenant | tenant id | why |", "|---|---|---|---|---|"]
        for row in summary.tenants.head(MAX_MARKDOWN_ROWS).itertuples(index=False):
            change = change_label(row.change, row.previous_priority, row.priority)
            lines.append(
                f"| {row.priority} | {md_escape(change)} "
                f"| {md_escape(display_name(row.name))} | {md_escape(row.tenant_id)} "
                f"| {md_escape(row.why)} |"
            )
        if len(summary.tenants) > MAX_MARKDOWN_ROWS:
            lines.append(
                f"\n_…and {len(summary.tenants) - MAX_MARKDOWN_ROWS:,} more in summary.html / "
                "summary.csv._"
            )
    else:
        lines.append("No P0/P1 tenant is new or changed on this day.")
    if files:
        lines += ["", "Files: " + ", ".join(f"`{p}`" for p in files.values())]
    return "\n".join(lines)


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


def _html_page(title: str, body: list[str]) -> str:
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


def _html_table(
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


def _snapshot_html(snapshot: SnapshotState) -> str:
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
        body.append(f'<p class="warn">{e(_late_warning(summary))}</p>')
    body += [
        "<h2>Active tenants by priority</h2>",
        _html_table(
            ["Priority", "Active tenants", "New on this day", "Changed on this day"],
            [tuple(e(c) for c in row) for row in _priority_table_rows(summary)],
            numeric=(1, 2, 3),
        ),
        f"<p>{e(_entered_sentence(summary.metrics[ENTERED]))}</p>",
        f"<h2>New and changed P0/P1 tenants ({len(summary.tenants):,})</h2>",
    ]
    if len(summary.tenants):
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
            _html_table(
                ["Priority", "Change", "Tenant", "Tenant ID", "Why", "Score"], rows, numeric=(5,)
            )
        )
        if len(summary.tenants) > MAX_HTML_ROWS:
            body.append(
                f"<p>…and {len(summary.tenants) - MAX_HTML_ROWS:,} more: see summary.csv.</p>"
            )
    else:
        body.append("<p>No P0/P1 tenant is new or changed on this day.</p>")
    body.append(
        '<p class="foot">P0 = HubSpot target account; P1-P3 from the tenant score. '
        "Source: apac_active_tenants only - Sales-owned tenants are never included.</p>"
    )
    return _html_page(f"APAC Daily Summary - {summary.partition_key}", body)


def _csv_text(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_cell("" if v is None else v) for v in row])
    return buffer.getvalue()


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


def render_daily_csv(summary: DailySummary) -> str:
    """One row per new/changed P0/P1 tenant (every row, not only the first)."""
    rows = [
        (
            summary.partition_key,
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
        for r in summary.tenants.itertuples(index=False)
    ]
    return _csv_text(DAILY_CSV_HEADER, rows)


def render_daily_metrics_csv(summary: DailySummary) -> str:
    rows = [
        (summary.partition_key, m, d, _csv_value(float(v)))
        for m, d, v in summary.metrics_rows().itertuples(index=False)
    ]
    return _csv_text(("partition", "metric", "dimension", "value"), rows)


# -- Weekly Metrics ---------------------------------------------------------------------------


@dataclass
class WeeklyMetrics:
    week_key: str
    days: list[date]
    daily: pd.DataFrame  # day, metric, dimension, value (days with data only)
    week: dict[str, dict[str, float]]  # week_<metric> -> dimension -> value
    generated_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def days_with_data(self) -> int:
        return int(self.daily["day"].nunique())

    @property
    def missing_days(self) -> list[date]:
        present = set(self.daily["day"])
        return [d for d in self.days if d not in present]

    def day_metric(self, metric: str, dimensions: Sequence[str]) -> pd.DataFrame:
        """One metric as a day × dimension table over all seven days (NaN = no data)."""
        rows = self.daily[self.daily["metric"] == metric]
        table = rows.pivot_table(
            index="day", columns="dimension", values="value", aggfunc="sum"
        ).reindex(index=self.days)
        extra = sorted(c for c in table.columns if c not in dimensions)
        table = table.reindex(columns=[*dimensions, *extra])
        present = set(self.daily["day"])
        for day in present:  # a day with data but no row for a dimension has 0 there
            table.loc[day] = table.loc[day].fillna(0.0)
        return table

    def rows(self) -> pd.DataFrame:
        """Rows for ``apac_weekly_metrics`` (``WEEKLY_COLUMNS``)."""
        daily = self.daily[["day", "metric", "dimension", "value"]]
        week = pd.DataFrame(
            [
                (self.days[0], metric, dimension, value)
                for metric, values in self.week.items()
                for dimension, value in values.items()
            ],
            columns=["day", "metric", "dimension", "value"],
        )
        frame = pd.concat([daily, week], ignore_index=True) if len(week) else daily.copy()
        frame["days_with_data"] = self.days_with_data
        return frame.sort_values(["day", "metric", "dimension"]).reset_index(drop=True)

    def counts(self) -> dict[str, Any]:
        """The figures for Dagster metadata."""
        return {
            "days_with_data": self.days_with_data,
            "missing_days": [d.isoformat() for d in self.missing_days],
            "new_top_priority": self.week.get(WEEK_PREFIX + NEW_TOP, {}),
            "changed_top_priority": self.week.get(WEEK_PREFIX + CHANGED_TOP, {}),
            "entered_active": self.week.get(WEEK_PREFIX + ENTERED, {}),
            "end_of_week_by_priority": self.week.get(WEEK_PREFIX + BY_PRIORITY, {}),
            "snapshot_days": self.week.get(WEEK_PREFIX + SNAPSHOT_STATUS, {}),
        }


def week_days(week_key: str) -> list[date]:
    """The seven CST days of a Monday-start week key."""
    start = date.fromisoformat(check_key(week_key))
    return [start + timedelta(days=i) for i in range(7)]


def build_weekly_metrics(
    week_key: str, daily_metrics: pd.DataFrame, *, generated_at: datetime | None = None
) -> WeeklyMetrics:
    """Aggregate the stored daily metrics of a week (``partition_key, metric, dimension,
    value``; days without a Daily Summary simply have no rows)."""
    days = week_days(week_key)
    keys = {d.isoformat(): d for d in days}
    frame = daily_metrics[daily_metrics["partition_key"].isin(list(keys))].copy()
    frame["day"] = frame["partition_key"].map(keys)
    frame["value"] = frame["value"].astype(float)
    frame = frame[["day", "metric", "dimension", "value"]].reset_index(drop=True)
    week: dict[str, dict[str, float]] = {}
    for metric, rows in frame.groupby("metric", sort=True):
        if metric in STATE_METRICS:
            rows = rows[rows["day"] == rows["day"].max()]
        values = rows.groupby("dimension", sort=True)["value"].sum()
        week[WEEK_PREFIX + str(metric)] = {str(k): float(v) for k, v in values.items()}
    return WeeklyMetrics(
        week_key=week_key,
        days=days,
        daily=frame,
        week=week,
        generated_at=generated_at or datetime.now(UTC),
    )


def _day_label(day: date, has_data: bool) -> str:
    return f"{day:%a %m-%d}" + ("" if has_data else "\n(no data)")


def _png(figure: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    return buffer.getvalue()


def _stacked_bar_chart(
    weekly: WeeklyMetrics,
    table: pd.DataFrame,
    colours: Mapping[str, str],
    *,
    title: str,
    ylabel: str,
    empty_text: str,
) -> bytes:
    # Imported here: matplotlib costs seconds to import, and every Dagster step process
    # imports the code location, while only the weekly report draws charts.
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4.2), layout="constrained")
    axes = figure.add_subplot()
    present = set(weekly.daily["day"])
    positions = list(range(len(weekly.days)))
    bottom = [0.0] * len(weekly.days)
    plotted = False
    for dimension in table.columns:
        values = [0.0 if pd.isna(v) else float(v) for v in table[dimension]]
        if not any(values):
            continue
        axes.bar(
            positions,
            values,
            bottom=bottom,
            label=str(dimension),
            color=colours.get(str(dimension), "#999999"),
            width=0.7,
        )
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        plotted = True
    axes.set_xticks(positions, [_day_label(d, d in present) for d in weekly.days])
    axes.set_title(title)
    axes.set_ylabel(ylabel)
    axes.spines[["top", "right"]].set_visible(False)
    if plotted:
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    else:
        axes.text(0.5, 0.5, empty_text, ha="center", va="center", transform=axes.transAxes)
        axes.set_yticks([])
    return _png(figure)


def priority_chart_png(weekly: WeeklyMetrics) -> bytes:
    """Stacked bars: Active tenants per priority on each day of the week."""
    return _stacked_bar_chart(
        weekly,
        weekly.day_metric(BY_PRIORITY, PRIORITY_DIMENSIONS),
        PRIORITY_COLOURS,
        title=f"Active tenants by priority, week of {weekly.week_key}",
        ylabel="tenants",
        empty_text="no Daily Summary this week",
    )


def match_method_chart_png(weekly: WeeklyMetrics) -> bytes:
    """Stacked bars: Active HubSpot target accounts per match method on each day."""
    table = weekly.day_metric(BY_MATCH_METHOD, MATCH_DIMENSIONS).drop(columns=["none"])
    return _stacked_bar_chart(
        weekly,
        table,
        MATCH_COLOURS,
        title=f"HubSpot target accounts by match method, week of {weekly.week_key}",
        ylabel="tenants",
        empty_text="no HubSpot target account this week",
    )


WEEKLY_TABLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    *((f"active_{p}", BY_PRIORITY, p) for p in PRIORITY_DIMENSIONS),
    *((f"new_{p}", NEW_TOP, p) for p in TOP_PRIORITIES),
    *((f"changed_{p}", CHANGED_TOP, p) for p in TOP_PRIORITIES),
    *((f"entered_{d}", ENTERED, d) for d in ENTERED_DIMENSIONS),
    *((f"match_{m}", BY_MATCH_METHOD, m) for m in MATCH_METHODS),
    *((f"snapshot_{s}", SNAPSHOT_STATUS, s) for s in SNAPSHOT_STATUSES),
)


def weekly_table(weekly: WeeklyMetrics) -> pd.DataFrame:
    """One row per day (all seven; empty cells where a day has no data) plus ``week``."""
    present = set(weekly.daily["day"])
    lookup = {(d, m, dim): v for d, m, dim, v in weekly.daily.itertuples(index=False, name=None)}
    records = []
    for day in weekly.days:
        record: dict[str, object] = {"day": day.isoformat(), "has_data": day in present}
        for column, metric, dimension in WEEKLY_TABLE_COLUMNS:
            value = lookup.get((day, metric, dimension), 0.0 if day in present else None)
            record[column] = value
        records.append(record)
    week: dict[str, object] = {"day": "week", "has_data": weekly.days_with_data > 0}
    for column, metric, dimension in WEEKLY_TABLE_COLUMNS:
        values = weekly.week.get(WEEK_PREFIX + metric)
        week[column] = None if values is None else values.get(dimension, 0.0)
    records.append(week)
    return pd.DataFrame(records)


def render_weekly_csv(weekly: WeeklyMetrics) -> str:
    """The per-day table (seven days plus ``week``); empty cells where a day has no data."""
    table = weekly_table(weekly)
    rows = [
        [weekly.week_key, *(_csv_value(v) for v in record)]
        for record in table.itertuples(index=False, name=None)
    ]
    return _csv_text(["week", *table.columns], rows)


def _csv_value(value: object) -> object:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else round(value, 2)
    return value


def _week_headline(weekly: WeeklyMetrics) -> list[str]:
    """Sentences shared by the Markdown and HTML renderings (plain text)."""
    lines = [f"Days with a Daily Summary: {weekly.days_with_data} of 7."]
    if weekly.missing_days:
        missing = ", ".join(f"{d:%a %m-%d}" for d in weekly.missing_days)
        lines.append(f"No data for: {missing}.")
    if weekly.days_with_data:
        new = weekly.week.get(WEEK_PREFIX + NEW_TOP, {})
        changed = weekly.week.get(WEEK_PREFIX + CHANGED_TOP, {})
        entered = weekly.week.get(WEEK_PREFIX + ENTERED, {})
        snapshot = weekly.week.get(WEEK_PREFIX + SNAPSHOT_STATUS, {})
        lines.append(
            f"New P0/P1 this week: {format_count(new.get('P0', 0))} P0, "
            f"{format_count(new.get('P1', 0))} P1; changed priority to P0/P1: "
            f"{format_count(changed.get('P0', 0))} P0, {format_count(changed.get('P1', 0))} P1."
        )
        lines.append(
            "Entered the Active list: "
            + ", ".join(
                f"{format_count(entered.get(k, 0))} {label}" for k, label in ENTERED_LABELS.items()
            )
            + "."
        )
        lines.append(
            "HubSpot target snapshot by day: "
            + ", ".join(f"{format_count(snapshot.get(s, 0))} {s}" for s in SNAPSHOT_STATUSES)
            + "."
        )
    return lines


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float | int):
        return format_count(value)
    return str(value)


def render_weekly_markdown(
    weekly: WeeklyMetrics, *, files: Mapping[str, Path] | None = None
) -> str:
    table = weekly_table(weekly)
    shown = ["day", "active_P0", "active_P1", "active_P2", "active_P3", "new_P0", "new_P1"]
    shown += ["changed_P0", "changed_P1", "entered_new", "entered_sales_owned"]
    lines = [
        f"### APAC Weekly Metrics - week of {weekly.week_key} (Mon-Sun, CST)",
        "",
        *(md_escape(line) + "  " for line in _week_headline(weekly)),
        "",
        "| " + " | ".join(c.replace("_", " ") for c in shown) + " |",
        "|" + "---|" + "---:|" * (len(shown) - 1),
    ]
    for record in table[shown].itertuples(index=False, name=None):
        lines.append("| " + " | ".join(md_escape(_cell(v)) or "-" for v in record) + " |")
    lines += ["", "Week row: event counts summed, tenant counts as of the last day with data."]
    if files:
        lines += ["", "Files: " + ", ".join(f"`{p}`" for p in files.values())]
    return "\n".join(lines)


def render_weekly_html(weekly: WeeklyMetrics, charts: Mapping[str, bytes]) -> str:
    """A self-contained page: headline, charts (base64 PNG), per-day table."""
    e = html.escape
    days = f"{weekly.days[0]:%Y-%m-%d} (Mon) to {weekly.days[-1]:%Y-%m-%d} (Sun)"
    body = [
        "<h1>APAC Weekly Metrics</h1>",
        f'<p class="sub">Week {e(days)}, China Standard Time · generated '
        f"{weekly.generated_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC</p>",
        *(f"<p>{e(line)}</p>" for line in _week_headline(weekly)),
    ]
    for name, png in charts.items():
        encoded = base64.b64encode(png).decode("ascii")
        body.append(f'<p><img alt="{e(name)}" src="data:image/png;base64,{encoded}"></p>')
    table = weekly_table(weekly)
    headers = [c.replace("_", " ") for c in table.columns]
    rows = [tuple(e(_cell(v)) for v in record) for record in table.itertuples(index=False)]
    body += [
        "<h2>Per day</h2>",
        _html_table(headers, rows, numeric=tuple(range(2, len(headers)))),
        '<p class="foot">Empty cells: no Daily Summary for that day. Week row: new, changed '
        "and entered are summed; tenant counts are those of the last day with data. Source: "
        "the stored Daily Summaries (apac_active_tenants only - Sales-owned tenants are never "
        "included).</p>",
    ]
    return _html_page(f"APAC Weekly Metrics - week of {weekly.week_key}", body)


# -- files ------------------------------------------------------------------------------------


def _write(path: Path, content: str | bytes) -> Path:
    """Write atomically (temporary file + rename), so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(content, bytes):
        temporary.write_bytes(content)
    else:
        temporary.write_text(content, encoding="utf-8")
    temporary.replace(path)
    return path


def daily_report_dir(home: str | Path, partition_key: str) -> Path:
    return Path(home) / "reports" / "daily" / check_key(partition_key)


def weekly_report_dir(home: str | Path, week_key: str) -> Path:
    return Path(home) / "reports" / "weekly" / check_key(week_key)


def write_daily_report(summary: DailySummary, home: str | Path) -> dict[str, Path]:
    """``summary.html``, ``summary.csv``, ``metrics.csv`` and ``summary.md`` under
    ``{home}/reports/daily/{partition}/``."""
    directory = daily_report_dir(home, summary.partition_key)
    files = {
        "html": _write(directory / "summary.html", render_daily_html(summary)),
        "csv": _write(directory / "summary.csv", render_daily_csv(summary)),
        "metrics_csv": _write(directory / "metrics.csv", render_daily_metrics_csv(summary)),
    }
    files["markdown"] = _write(directory / "summary.md", render_daily_markdown(summary))
    return files


def write_weekly_report(weekly: WeeklyMetrics, home: str | Path) -> dict[str, Path]:
    """``metrics.html``, ``metrics.csv``, ``metrics.md``, ``priorities.png`` and
    ``match_methods.png`` under ``{home}/reports/weekly/{week}/``."""
    directory = weekly_report_dir(home, weekly.week_key)
    charts = {
        "priorities": priority_chart_png(weekly),
        "match_methods": match_method_chart_png(weekly),
    }
    files = {
        "html": _write(directory / "metrics.html", render_weekly_html(weekly, charts)),
        "csv": _write(directory / "metrics.csv", render_weekly_csv(weekly)),
        "markdown": _write(directory / "metrics.md", render_weekly_markdown(weekly)),
    }
    for name, png in charts.items():
        files[f"{name}_png"] = _write(directory / f"{name}.png", png)
    return files
