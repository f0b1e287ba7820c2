"""What the reports are made of: metric names and dimensions, and the report dataclasses
(docs/reports.md).

Metrics are ``(metric, dimension, value)`` per day. Two kinds aggregate differently over a
week: *state* metrics (tenants per priority, per match method, per reason) describe the
Active table when the day was summarised, so a week reports its last day with data; *event*
metrics (new and changed P0/P1, tenants entering Active, priority transitions, snapshot
status) happen on a day, so a week sums them. Week rows are stored on the week's first day
with the metric name prefixed ``week_``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Protocol

import pandas as pd

from morpheus_pipelines.platform.report_notes import OperationsNote, severity_counts
from morpheus_pipelines.tenants.rules import vocabulary
from morpheus_pipelines.tenants.rules.vocabulary import MatchMethod, Priority, SnapshotStatus

PRIORITIES = vocabulary.values(Priority)
TOP_PRIORITIES = (Priority.P0.value, Priority.P1.value)
PRIORITY_DIMENSIONS = (*PRIORITIES, "unscored")
MATCH_METHODS = vocabulary.values(MatchMethod)
MATCH_DIMENSIONS = (*MATCH_METHODS, "none")
REASON_DIMENSIONS = ("hubspot_target_account", "score", "unscored")
ENTERED_DIMENSIONS = ("new", "sales_owned")
SNAPSHOT_STATUSES = vocabulary.values(SnapshotStatus)

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

ENTERED_LABELS = {"new": "new tenants", "sales_owned": "moved from Sales-owned"}

# One listed tenant of a Daily Summary, as read from apac_active_tenants and as stored in
# apac_daily_summary_tenants.
SUMMARY_TENANT_COLUMNS = (
    "tenant_id",
    "name",
    "priority",
    "previous_priority",
    "change",
    "reason",
    "hubspot_match_method",
    "hubspot_company_id",
    "total_score",
)

# The most tenants any rendering of a Daily Summary shows (the HTML page); the table and the
# CSV have every listed tenant, written as they stream past (docs/reports.md).
MAX_SHOWN_TENANTS = 2000

_KEY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def check_key(key: str) -> str:
    """A partition or week key (``YYYY-MM-DD``); anything else never becomes a path."""
    if not _KEY.match(key):
        raise ValueError(f"not a daily/weekly partition key: {key!r}")
    return key


def metrics_frame(metrics: Mapping[str, Mapping[str, float]]) -> pd.DataFrame:
    """``{metric: {dimension: value}}`` as rows ``metric, dimension, value``."""
    rows = [
        (metric, dimension, value)
        for metric, values in metrics.items()
        for dimension, value in values.items()
    ]
    return pd.DataFrame(rows, columns=["metric", "dimension", "value"])


class SnapshotHealth(Protocol):
    """The HubSpot target snapshot that routing used, as a report describes it.

    ``services.hubspot_snapshot.SnapshotState`` is one; the reports only read these fields.
    """

    @property
    def status(self) -> str: ...  # fresh | stale | unavailable

    @property
    def sync_id(self) -> str | None: ...

    @property
    def synced_at(self) -> datetime | None: ...

    @property
    def age_seconds(self) -> float | None: ...


@dataclass(frozen=True)
class ActiveTenantFigures:
    """The counts the Daily Summary reads from ``apac_active_tenants`` (see
    ``repositories.reports``); the listed tenants stream past separately
    (:class:`~.daily.ListedTenants`)."""

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
    snapshot: SnapshotHealth
    # The first MAX_SHOWN_TENANTS listed tenants in report order (SUMMARY_TENANT_COLUMNS + why,
    # names masked): all that any rendering shows. The whole list is in
    # apac_daily_summary_tenants and summary.csv.
    tenants: pd.DataFrame
    tenant_count: int  # how many tenants the summary lists
    metrics: dict[str, dict[str, float]]
    state_partition: str | None = None
    # The Operations section: what a person must act on, as gathered when the summary ran
    # (not stored as rows; docs/reports.md, "Operations").
    notes: tuple[OperationsNote, ...] = ()

    @property
    def late(self) -> bool:
        """The Active table already reflects a later partition (a late re-run)."""
        return self.state_partition is not None and self.state_partition > self.partition_key

    def metrics_rows(self) -> pd.DataFrame:
        return metrics_frame(self.metrics)

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
            "operations_notes": severity_counts(self.notes),
        }


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
