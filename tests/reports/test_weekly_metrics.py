"""Weekly Metrics from the week's stored Daily Summaries (docs/reports.md)."""

from __future__ import annotations

import base64
import csv
import re
from datetime import date
from decimal import Decimal
from pathlib import Path

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.tenants.reports.figures import metrics_frame
from morpheus_pipelines.tenants.store import DailySummaryRepository
from tests.support.reports import (
    WEEK,
    bucket_row,
    execute,
    insert_rows,
    materialization_metadata,
    query,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MONDAY, WEDNESDAY = "2026-11-16", "2026-11-18"


def week_rows(database_url: str, week_key: str = WEEK) -> dict[tuple[str, str, str], float]:
    return {
        (day.isoformat(), metric, dimension): float(value)
        for day, metric, dimension, value in query(
            database_url,
            "SELECT day, metric, dimension, value FROM apac_weekly_metrics WHERE week_key = :w",
            w=week_key,
        )
    }


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, path
    assert data[12:16] == b"IHDR" and data.rstrip(b"\x00")[-8:-4] == b"IEND"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width > 300 and height > 200


def test_week_aggregates_its_days_and_reports_missing_ones(
    database_url: str, run_daily, run_weekly, home: Path
) -> None:
    # Monday: a new P1, a P2, and a HubSpot target account (P0) matched by portal id
    insert_rows(
        database_url,
        "apac_active_tenants",
        [
            bucket_row(
                "a",
                priority="P1",
                priority_changed_partition=MONDAY,
                bucket_entered_partition=MONDAY,
            ),
            bucket_row("b", priority="P2", bucket_entered_partition=MONDAY),
            bucket_row(
                "c",
                priority="P0",
                priority_reason="hubspot_target_account",
                hubspot_target=True,
                hubspot_match_method="portal_id",
                hubspot_company_id="501",
                priority_changed_partition=MONDAY,
                bucket_entered_partition=MONDAY,
            ),
        ],
    )
    assert run_daily(MONDAY).success
    # Wednesday: b rises to P1, d arrives from Sales-owned as a new P1
    execute(
        database_url,
        "UPDATE apac_active_tenants SET priority = 'P1', previous_priority = 'P2', "
        "priority_changed_partition = :d, partition_key = :d WHERE tenant_id = 'b'",
        d=WEDNESDAY,
    )
    insert_rows(
        database_url,
        "apac_active_tenants",
        [
            bucket_row(
                "d",
                priority="P1",
                total_score=Decimal("88.00"),
                priority_changed_partition=WEDNESDAY,
                bucket_entered_partition=WEDNESDAY,
                entered_from="sales_owned",
                partition_key=WEDNESDAY,
            )
        ],
    )
    assert run_daily(WEDNESDAY).success

    result = run_weekly()
    assert result.success
    rows = week_rows(database_url)
    # per-day rows only for the two days with a Daily Summary
    assert {day for day, _, _ in rows} == {MONDAY, WEDNESDAY}
    assert rows[(MONDAY, "tenants_by_priority", "P1")] == 1
    assert rows[(WEDNESDAY, "tenants_by_priority", "P1")] == 3
    # events are summed over the week (stored on the Monday, prefixed week_)
    assert rows[(MONDAY, "week_new_top_priority", "P0")] == 1
    assert rows[(MONDAY, "week_new_top_priority", "P1")] == 2  # a on Monday, d on Wednesday
    assert rows[(MONDAY, "week_changed_top_priority", "P1")] == 1  # b
    assert rows[(MONDAY, "week_entered_active", "new")] == 3
    assert rows[(MONDAY, "week_entered_active", "sales_owned")] == 1
    assert rows[(MONDAY, "week_snapshot_status", "unavailable")] == 2
    # tenant counts are the last day's, never a sum of days
    assert rows[(MONDAY, "week_tenants_by_priority", "P1")] == 3
    assert rows[(MONDAY, "week_tenants_by_priority", "P2")] == 0
    assert rows[(MONDAY, "week_active_tenants", "all")] == 4
    assert rows[(MONDAY, "week_tenants_by_match_method", "portal_id")] == 1
    assert query(
        database_url,
        "SELECT DISTINCT days_with_data FROM apac_weekly_metrics WHERE week_key = :w",
        w=WEEK,
    ) == [(2,)]

    meta = materialization_metadata(result, "weekly_metrics")
    assert meta["days_with_data"] == 2
    assert meta["missing_days"] == [
        "2026-11-17",
        "2026-11-19",
        "2026-11-20",
        "2026-11-21",
        "2026-11-22",
    ]
    assert "Days with a Daily Summary: 2 of 7" in meta["metrics"]

    directory = home / "reports" / "weekly" / WEEK
    for name in ("priorities.png", "match_methods.png"):
        assert_png(directory / name)
    with (directory / "metrics.csv").open(encoding="utf-8", newline="") as handle:
        table = {r["day"]: r for r in csv.DictReader(handle)}
    assert list(table) == [*(f"2026-11-{d}" for d in range(16, 23)), "week"]
    assert table[WEDNESDAY]["active_P1"] == "3" and table[WEDNESDAY]["entered_sales_owned"] == "1"
    assert table["2026-11-17"]["has_data"] == "False" and table["2026-11-17"]["active_P1"] == ""
    assert table["week"]["new_P1"] == "2" and table["week"]["active_P1"] == "3"

    page = (directory / "metrics.html").read_text(encoding="utf-8")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 2
    assert base64.b64decode(images[0]) == (directory / "priorities.png").read_bytes()
    assert "No data for: Tue 11-17, Thu 11-19, Fri 11-20, Sat 11-21, Sun 11-22." in page


def _store_day(database_url: str, day: str, p1: int, new_p1: int) -> None:
    frame = metrics_frame(
        {
            "tenants_by_priority": {"P0": 2, "P1": p1, "P2": 10, "P3": 5, "unscored": 0},
            "new_top_priority": {"P0": 0, "P1": new_p1},
        }
    )
    with get_session(database_url) as session:
        DailySummaryRepository().replace_metrics(
            session, frame, partition_key=day, run_id=f"daily-{day}"
        )


def test_full_week_rerun_is_identical_and_an_empty_week_still_reports(
    database_url: str, run_weekly, home: Path
) -> None:
    for offset in range(7):
        _store_day(database_url, f"2026-11-{16 + offset}", p1=10 + offset, new_p1=offset)
    # a day of another week must not leak in
    _store_day(database_url, "2026-11-23", p1=999, new_p1=999)

    first = run_weekly()
    rows = week_rows(database_url)
    assert rows[(MONDAY, "week_new_top_priority", "P1")] == sum(range(7))
    assert rows[(MONDAY, "week_tenants_by_priority", "P1")] == 16  # Sunday's count
    assert {day for day, _, _ in rows} == {f"2026-11-{d}" for d in range(16, 23)}
    assert materialization_metadata(first, "weekly_metrics")["days_with_data"] == 7

    before = query(
        database_url,
        "SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM apac_weekly_metrics t",
    )
    second = run_weekly()
    assert second.run_id != first.run_id
    assert materialization_metadata(second, "weekly_metrics")["rows_written"] == 0
    assert (
        query(
            database_url,
            "SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM apac_weekly_metrics t",
        )
        == before
    )
    assert query(database_url, "SELECT DISTINCT run_id FROM apac_weekly_metrics") == [
        (first.run_id,)
    ]

    # a week with no Daily Summary at all: succeeds, says so, stores nothing, still charts
    empty = run_weekly("2026-11-09")
    assert empty.success
    meta = materialization_metadata(empty, "weekly_metrics")
    assert meta["days_with_data"] == 0 and len(meta["missing_days"]) == 7
    assert week_rows(database_url, "2026-11-09") == {}
    assert_png(home / "reports" / "weekly" / "2026-11-09" / "priorities.png")
    assert date.fromisoformat(MONDAY).weekday() == 0
