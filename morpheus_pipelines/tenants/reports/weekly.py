"""The Weekly Metrics: the week's trends aggregated from its stored Daily Summary metrics, and
the table and sentences every rendering of it shares (docs/reports.md, "Weekly Metrics").

State metrics report the week's last day with data, event metrics are summed (see
:mod:`morpheus_pipelines.tenants.reports.figures`).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pandas as pd

from morpheus_pipelines.tenants.reports.figures import (
    BY_MATCH_METHOD,
    BY_PRIORITY,
    CHANGED_TOP,
    ENTERED,
    ENTERED_DIMENSIONS,
    ENTERED_LABELS,
    MATCH_METHODS,
    NEW_TOP,
    PRIORITY_DIMENSIONS,
    SNAPSHOT_STATUS,
    SNAPSHOT_STATUSES,
    STATE_METRICS,
    TOP_PRIORITIES,
    WEEK_PREFIX,
    WeeklyMetrics,
    check_key,
)
from morpheus_pipelines.tenants.reports.text import format_count


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


# -- what every rendering says (plain values and text; each format escapes it) ----------------

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


def week_headline(weekly: WeeklyMetrics) -> list[str]:
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
