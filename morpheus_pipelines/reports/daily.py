"""The Daily Summary: what Sales should hear about on a CST day, built from the figures read
from ``apac_active_tenants``, and the sentences every rendering of it shares (docs/reports.md,
"Daily Summary").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import pandas as pd

from morpheus_pipelines.observability.redaction import mask_emails
from morpheus_pipelines.reports.figures import (
    ACTIVE_TENANTS,
    BY_MATCH_METHOD,
    BY_PRIORITY,
    BY_REASON,
    CHANGED_TOP,
    DOWNGRADED_TOP,
    ENTERED,
    ENTERED_DIMENSIONS,
    ENTERED_LABELS,
    ENTERED_TOP,
    MATCH_DIMENSIONS,
    NEW_TOP,
    PRIORITY_DIMENSIONS,
    REASON_DIMENSIONS,
    RETIRED,
    SNAPSHOT_STATUS,
    SNAPSHOT_STATUSES,
    TOP_PRIORITIES,
    TRANSITIONS,
    ActiveTenantFigures,
    DailySummary,
    SnapshotHealth,
    check_key,
)
from morpheus_pipelines.reports.text import format_count, why


def _filled(counts: Mapping[str, int], dimensions: Sequence[str]) -> dict[str, int]:
    """Known dimensions first (0 when absent), then any unexpected ones, sorted."""
    filled = {d: int(counts.get(d, 0)) for d in dimensions}
    filled.update({str(k): int(v) for k, v in sorted(counts.items()) if k not in filled})
    return filled


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
    snapshot: SnapshotHealth,
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


# -- what every rendering says (plain text; each format escapes it) ---------------------------


def late_warning(summary: DailySummary) -> str:
    return (
        f"Note: the Active table already includes partition {summary.state_partition}; "
        f"counts show that later state, and tenants whose priority changed again since "
        f"{summary.partition_key} are not listed."
    )


def priority_table_rows(summary: DailySummary) -> list[tuple[str, str, str, str]]:
    """Priority, active tenants, new and changed on the day; then the totals."""
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


def entered_sentence(entered: Mapping[str, float]) -> str:
    parts = [f"{format_count(entered.get(k, 0))} {label}" for k, label in ENTERED_LABELS.items()]
    parts += [f"{format_count(v)} {k}" for k, v in entered.items() if k not in ENTERED_LABELS]
    return "Entered the Active list on this day: " + ", ".join(parts) + "."
