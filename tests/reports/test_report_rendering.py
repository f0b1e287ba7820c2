"""The pure parts of the reports: why-texts, escaping, masking, keys and week aggregation."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import pandas as pd
import pytest

from morpheus_pipelines.platform.rendering import csv_cell, md_escape
from morpheus_pipelines.tenants.reports.csv import daily_csv_header, daily_csv_rows
from morpheus_pipelines.tenants.reports.daily import ListedTenants, build_daily_summary
from morpheus_pipelines.tenants.reports.figures import (
    SUMMARY_TENANT_COLUMNS,
    ActiveTenantFigures,
    check_key,
)
from morpheus_pipelines.tenants.reports.markdown import render_daily_markdown
from morpheus_pipelines.tenants.reports.text import (
    display_name,
    format_score,
    snapshot_line,
    why,
)
from morpheus_pipelines.tenants.reports.weekly import build_weekly_metrics
from morpheus_pipelines.tenants.steps.hubspot_snapshot import SnapshotState


def test_why_names_the_evidence_or_the_score() -> None:
    assert (
        why("hubspot_target_account", "email_domain", "503", Decimal("40"))
        == "HubSpot target account (match: email_domain, company 503)"
    )
    assert why("hubspot_target_account", None, None, None) == "HubSpot target account"
    assert why("score", None, None, Decimal("78.50")) == "score 78.5"
    assert why("score", None, None, None) == "score n/a"
    assert why("unknown", None, None, Decimal("1")) == "reason not recorded"


@pytest.mark.parametrize(
    ("value", "text"),
    [(Decimal("80.00"), "80"), (Decimal("78.50"), "78.5"), (70.129, "70.13"), (0, "0")],
)
def test_format_score(value: object, text: str) -> None:
    assert format_score(value) == text


def test_untrusted_text_is_neutralised() -> None:
    assert csv_cell("=1+1") == "'=1+1" and csv_cell("@SUM(A1)") == "'@SUM(A1)"
    assert csv_cell("Acme") == "Acme" and csv_cell(3) == 3
    assert md_escape("a|b*c_<b>") == "a\\|b\\*c\\_&lt;b&gt;"
    assert display_name("Mail ME: Jane.Doe@Acme.example now") == "Mail ME: j***@acme.example now"
    assert display_name(None) == "(no name)"
    assert display_name("x" * 500).endswith("…") and len(display_name("x" * 500)) == 120
    assert display_name("a\nb\x00c") == "a b c"


def test_keys_are_dates_and_never_paths() -> None:
    assert check_key("2026-11-18") == "2026-11-18"
    for bad in ("../../etc", "2026-11-18/../x", ""):
        with pytest.raises(ValueError):
            check_key(bad)


def test_snapshot_lines() -> None:
    synced = datetime(2026, 11, 29, 7, 30, tzinfo=UTC)
    assert snapshot_line(SnapshotState("fresh", "s1", synced, 7200.0)).startswith(
        "HubSpot target snapshot: fresh - last successful sync 2026-11-29 07:30 UTC, 2.0 h old"
    )
    assert "STALE" in snapshot_line(SnapshotState("stale", "s1", synced, 3600.0 * 50))
    assert "UNAVAILABLE" in snapshot_line(SnapshotState("unavailable", None, None, None))


def test_daily_summary_from_figures_with_pandas_missing_values() -> None:
    changed = pd.DataFrame(
        [
            ("t1", None, "P0", None, "new", "hubspot_target_account", "portal_id", "501", None),
            ("t2", "Beta", "P1", "P3", "changed", "score", None, None, Decimal("71.00")),
        ],
        columns=list(SUMMARY_TENANT_COLUMNS),
    )
    listed = ListedTenants()
    listed.add(changed)
    figures = ActiveTenantFigures(
        priority_counts={"P0": 1, "P1": 1, "P9": 2},
        reason_counts={},
        match_method_counts={"portal_id": 1},
        entered_counts={},
        transitions={"P3->P1": 1},
    )
    summary = build_daily_summary(
        "2026-11-18", figures, listed, SnapshotState("unavailable", None, None, None)
    )
    assert summary.metrics["tenants_by_priority"] == {
        "P0": 1,
        "P1": 1,
        "P2": 0,
        "P3": 0,
        "unscored": 0,
        "P9": 2,
    }
    assert summary.metrics["active_tenants"] == {"all": 4}
    assert summary.metrics["new_top_priority"] == {"P0": 1, "P1": 0}
    assert summary.metrics["changed_top_priority"] == {"P0": 0, "P1": 1}
    assert list(summary.tenants["why"]) == [
        "HubSpot target account (match: portal_id, company 501)",
        "score 71",
    ]
    markdown = render_daily_markdown(summary)
    assert "| P1 | P3 → P1 | Beta | t2 | score 71 |" in markdown
    assert "| P0 | new | (no name) | t1 |" in markdown
    text = daily_csv_header() + daily_csv_rows("2026-11-18", summary.tenants)
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert not {"nan", "NaN", "None", "<NA>"} & set(cells)
    assert cells.count("") >= 4  # missing values are empty cells


def test_week_state_metrics_take_the_last_day_and_events_sum() -> None:
    daily = pd.DataFrame(
        [
            ("2026-11-16", "tenants_by_priority", "P1", 5.0),
            ("2026-11-20", "tenants_by_priority", "P1", 7.0),
            ("2026-11-16", "new_top_priority", "P1", 2.0),
            ("2026-11-20", "new_top_priority", "P1", 3.0),
            ("2026-11-23", "new_top_priority", "P1", 100.0),  # next week
        ],
        columns=["partition_key", "metric", "dimension", "value"],
    )
    weekly = build_weekly_metrics("2026-11-16", daily)
    assert weekly.days_with_data == 2 and len(weekly.missing_days) == 5
    assert weekly.week["week_tenants_by_priority"] == {"P1": 7.0}
    assert weekly.week["week_new_top_priority"] == {"P1": 5.0}
    rows = weekly.rows()
    assert set(rows["days_with_data"]) == {2}
    assert len(rows) == 4 + 2
    table = weekly.day_metric("tenants_by_priority", ("P0", "P1"))
    assert table.loc[pd.Timestamp("2026-11-16").date(), "P0"] == 0.0  # a day with data
    assert pd.isna(table.loc[pd.Timestamp("2026-11-17").date(), "P1"])  # a day without
