"""The Daily Summary: what Sales should hear about on a CST day, built from the figures read
from ``apac_active_tenants``, and the sentences every rendering of it shares (docs/reports.md,
"Daily Summary").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd

from morpheus_pipelines.platform.observability.redaction import mask_emails
from morpheus_pipelines.platform.report_notes import OperationsNote, most_urgent_first
from morpheus_pipelines.tenants.reports.figures import (
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
    MAX_SHOWN_TENANTS,
    NEW_TOP,
    PRIORITY_DIMENSIONS,
    REASON_DIMENSIONS,
    RETIRED,
    SNAPSHOT_STATUS,
    SNAPSHOT_STATUSES,
    SUMMARY_TENANT_COLUMNS,
    TOP_PRIORITIES,
    TRANSITIONS,
    ActiveTenantFigures,
    DailySummary,
    SnapshotHealth,
    check_key,
)
from morpheus_pipelines.tenants.reports.text import display_line, format_count, why


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


LISTED_CHANGES = ("new", "changed", "entered")  # counted per priority; "downgraded" apart


def _add(counts: dict[str, int], values: pd.Series) -> None:
    for key, n in values.value_counts().items():
        counts[str(key)] = counts.get(str(key), 0) + int(n)


@dataclass
class ListedTenants:
    """The tenants a Daily Summary lists, gathered chunk by chunk as they stream past
    (:meth:`add`): how many, how many per change and priority, and the first ``keep`` in
    report order — all that any rendering shows. The caller writes every chunk on to the table
    and the CSV, so memory does not grow with the list (docs/reports.md)."""

    keep: int = MAX_SHOWN_TENANTS
    count: int = 0
    by_change: dict[str, dict[str, int]] = field(
        default_factory=lambda: {change: {} for change in LISTED_CHANGES}
    )
    downgraded: dict[str, int] = field(default_factory=dict)  # by the priority left
    _shown: list[pd.DataFrame] = field(default_factory=list)

    def add(self, chunk: pd.DataFrame) -> pd.DataFrame:
        """Count the chunk (``SUMMARY_TENANT_COLUMNS``, report order) and return its rows as
        stored and shown (:func:`summary_tenants`)."""
        rows = summary_tenants(chunk)
        self.count += len(rows)
        for change, counts in self.by_change.items():
            _add(counts, rows.loc[rows["change"] == change, "priority"])
        _add(self.downgraded, rows.loc[rows["change"] == "downgraded", "previous_priority"])
        room = self.keep - sum(len(shown) for shown in self._shown)
        if room > 0:
            self._shown.append(rows.head(room))
        return rows

    def shown(self) -> pd.DataFrame:
        """The first ``keep`` rows added."""
        if not self._shown:
            return summary_tenants(pd.DataFrame(columns=list(SUMMARY_TENANT_COLUMNS)))
        return pd.concat(self._shown, ignore_index=True)


def build_daily_summary(
    partition_key: str,
    figures: ActiveTenantFigures,
    listed: ListedTenants,
    snapshot: SnapshotHealth,
    *,
    generated_at: datetime | None = None,
    notes: Sequence[OperationsNote] = (),
) -> DailySummary:
    """The Daily Summary of one partition from the figures read for it and the tenants it
    lists (every chunk already added), with the notes of its Operations section."""
    check_key(partition_key)
    priority_counts = _filled(figures.priority_counts, PRIORITY_DIMENSIONS)
    metrics: dict[str, dict[str, float]] = {
        ACTIVE_TENANTS: {"all": sum(priority_counts.values())},
        BY_PRIORITY: priority_counts,
        BY_REASON: _filled(figures.reason_counts, REASON_DIMENSIONS),
        BY_MATCH_METHOD: _filled(figures.match_method_counts, MATCH_DIMENSIONS),
        NEW_TOP: _filled(listed.by_change["new"], TOP_PRIORITIES),
        CHANGED_TOP: _filled(listed.by_change["changed"], TOP_PRIORITIES),
        ENTERED: _filled(figures.entered_counts, ENTERED_DIMENSIONS),
        ENTERED_TOP: _filled(listed.by_change["entered"], TOP_PRIORITIES),
        DOWNGRADED_TOP: _filled(listed.downgraded, TOP_PRIORITIES),
        RETIRED: _filled(figures.retired, ("all",)),
        TRANSITIONS: _filled(figures.transitions, ()),
        SNAPSHOT_STATUS: {s: int(s == snapshot.status) for s in SNAPSHOT_STATUSES},
    }
    return DailySummary(
        partition_key=partition_key,
        generated_at=generated_at or datetime.now(UTC),
        snapshot=snapshot,
        tenants=listed.shown(),
        tenant_count=listed.count,
        metrics=metrics,
        state_partition=figures.state_partition,
        notes=tuple(notes),
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


SEVERITY_LABELS = {"error": "ERROR", "warning": "WARNING", "ok": "OK"}


def operations_notes(summary: DailySummary) -> list[OperationsNote]:
    """The notes of the Operations section as every rendering shows them: most urgent first,
    each line one line of text with email-shaped text masked (a HubSpot error may quote a
    contact's address). An empty list means no section: without notes nothing was checked, so
    the report does not claim that all is well."""
    return [
        OperationsNote(
            title=display_line(note.title) or "(untitled)",
            severity=note.severity,
            lines=tuple(display_line(line) for line in note.lines),
        )
        for note in most_urgent_first(summary.notes)
    ]


def note_heading(note: OperationsNote) -> str:
    """``ERROR · HubSpot outbox``: the severity in words a reader cannot miss, then the title."""
    return f"{SEVERITY_LABELS[note.severity]} · {note.title}"
