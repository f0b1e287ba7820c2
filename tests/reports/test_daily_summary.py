"""The Daily Summary on the real database, run with ``dg.materialize`` (docs/reports.md)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal
from functools import partial
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.report_notes import OperationsNote
from morpheus_pipelines.tenants.reports.figures import MAX_SHOWN_TENANTS
from morpheus_pipelines.tenants.steps.report_publishing import publish_daily_summary
from morpheus_pipelines.tenants.store import DailySummaryRepository
from tests.support.reports import (
    DAY,
    LIST_ID,
    bucket_row,
    execute,
    insert_rows,
    materialization_metadata,
    query,
    record_sync,
)

ACTIVE = "apac_active_tenants"
SALES_OWNED = "apac_sales_owned_tenants"


def scenario() -> list[dict]:
    """Active rows around DAY: new and changed P0/P1, and what must stay out of the list."""
    return [
        bucket_row(
            "t-target",
            priority="P0",
            calculated_priority="P2",
            priority_reason="hubspot_target_account",
            total_score=Decimal("48.20"),
            hubspot_target=True,
            hubspot_match_method="email_domain",
            hubspot_company_id="503",
            priority_changed_partition=DAY,
            bucket_entered_partition=DAY,
            entered_from="new",
        ),
        bucket_row(
            "t-new-p1",
            priority="P1",
            calculated_priority="P1",
            total_score=Decimal("78.50"),
            priority_changed_partition=DAY,
            bucket_entered_partition=DAY,
            entered_from="sales_owned",
        ),
        bucket_row(
            "t-up",
            priority="P1",
            calculated_priority="P1",
            total_score=Decimal("71.00"),
            previous_priority="P2",
            priority_changed_partition=DAY,
        ),
        # a downgrade out of P1 is listed as such
        bucket_row("t-down", priority="P2", previous_priority="P1", priority_changed_partition=DAY),
        # entered from Sales-owned with a P0 carried from an earlier day: listed
        bucket_row(
            "t-carried",
            priority="P0",
            priority_reason="hubspot_target_account",
            total_score=Decimal("40.00"),
            priority_changed_partition="2026-11-10",
            bucket_entered_partition=DAY,
            entered_from="sales_owned",
        ),
        # changed on another day, new but only P2: not listed
        bucket_row("t-yesterday", priority="P1", priority_changed_partition="2026-11-17"),
        bucket_row("t-new-p2", priority="P2", priority_changed_partition=DAY),
        # retired today (no longer selected): in no list and no count but the day's retired
        bucket_row(
            "t-retired",
            priority="P0",
            priority_changed_partition=DAY,
            partition_key=DAY,
            retired_at=datetime(2026, 11, 18, tzinfo=UTC),
        ),
        # retired on an earlier day: not one of the day's retired
        bucket_row(
            "t-retired-before",
            priority="P1",
            partition_key="2026-11-17",
            retired_at=datetime(2026, 11, 17, tzinfo=UTC),
        ),
        bucket_row("t-unscored", priority=None, calculated_priority=None, priority_reason=None),
    ]


def summary_rows(database_url: str) -> dict[str, tuple]:
    return {
        r[0]: r[1:]
        for r in query(
            database_url,
            "SELECT tenant_id, priority, previous_priority, change, reason, "
            "hubspot_match_method, hubspot_company_id, total_score "
            "FROM apac_daily_summary_tenants WHERE partition_key = :p",
            p=DAY,
        )
    }


def metric_values(database_url: str, metric: str) -> dict[str, float]:
    return {
        d: float(v)
        for d, v in query(
            database_url,
            "SELECT dimension, value FROM apac_daily_summary_metrics "
            "WHERE partition_key = :p AND metric = :m",
            p=DAY,
            m=metric,
        )
    }


def table_hash(database_url: str, table: str) -> str:
    return query(
        database_url,
        f"SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM {table} t",
    )[0][0]


def test_lists_new_and_changed_top_priorities_with_why(
    database_url: str, run_daily, home: Path
) -> None:
    insert_rows(database_url, ACTIVE, scenario())
    record_sync(database_url, status="success", hours_ago=3)
    result = run_daily()
    assert result.success

    rows = summary_rows(database_url)
    assert rows == {
        "t-target": (
            "P0",
            None,
            "new",
            "hubspot_target_account",
            "email_domain",
            "503",
            Decimal("48.20"),
        ),
        "t-new-p1": ("P1", None, "new", "score", None, None, Decimal("78.50")),
        "t-up": ("P1", "P2", "changed", "score", None, None, Decimal("71.00")),
        "t-down": ("P2", "P1", "downgraded", "score", None, None, Decimal("50.00")),
        "t-carried": (
            "P0",
            None,
            "entered",
            "hubspot_target_account",
            None,
            None,
            Decimal("40.00"),
        ),
    }
    assert metric_values(database_url, "tenants_by_priority") == {
        "P0": 2,
        "P1": 3,
        "P2": 2,
        "P3": 0,
        "unscored": 1,
    }
    assert metric_values(database_url, "new_top_priority") == {"P0": 1, "P1": 1}
    assert metric_values(database_url, "changed_top_priority") == {"P0": 0, "P1": 1}
    assert metric_values(database_url, "entered_active") == {"new": 1, "sales_owned": 2}
    assert metric_values(database_url, "entered_top_priority") == {"P0": 1, "P1": 0}
    assert metric_values(database_url, "downgraded_from_top_priority") == {"P0": 0, "P1": 1}
    assert metric_values(database_url, "priority_transitions") == {"P1->P2": 1, "P2->P1": 1}
    assert metric_values(database_url, "tenants_by_match_method")["email_domain"] == 1
    assert metric_values(database_url, "retired_active") == {"all": 1}
    assert metric_values(database_url, "tenants_by_priority_reason") == {
        "hubspot_target_account": 2,
        "score": 5,
        "unscored": 1,
    }
    assert metric_values(database_url, "snapshot_status") == {
        "fresh": 1,
        "stale": 0,
        "unavailable": 0,
    }

    meta = materialization_metadata(result, "daily_summary")
    assert (meta["new_p0"], meta["new_p1"], meta["changed_p0"], meta["changed_p1"]) == (
        1,
        1,
        0,
        1,
    )
    assert meta["dagster/row_count"] == 5
    assert meta["snapshot_status"] == "fresh"
    assert "HubSpot target account (match: email\\_domain, company 503)" in meta["summary"]

    page = (home / "reports" / "daily" / DAY / "summary.html").read_text(encoding="utf-8")
    assert "HubSpot target account (match: email_domain, company 503)" in page
    assert "score 78.5" in page and "P2 → P1" in page
    assert "HubSpot target snapshot: fresh" in page and "3.0 h old" in page
    assert "t-yesterday" not in page and "t-new-p2" not in page and "t-retired" not in page
    assert "P1 → P2 (left P0/P1)" in page
    assert "entered Active from Sales-owned as P0" in page
    # the list is ordered: P0 first, then P1 by score
    assert page.index("t-target") < page.index("t-new-p1") < page.index("t-up")
    assert page.index("t-up") < page.index("t-down")


def test_sales_owned_tenants_never_appear_even_as_p0(
    database_url: str, run_daily, home: Path
) -> None:
    insert_rows(database_url, ACTIVE, scenario()[:1])
    insert_rows(
        database_url,
        SALES_OWNED,
        [
            bucket_row(
                "so-tenant-p0",
                name="Sales Owned Big Co",
                priority="P0",
                priority_override="P0",
                priority_reason="score",
                total_score=Decimal("99.00"),
                priority_changed_partition=DAY,
                bucket_entered_partition=DAY,
                entered_from="active",
                sales_owner_email="alice.sales@morpheus.example",
            ),
            bucket_row("so-tenant-p1", priority="P1", priority_changed_partition=DAY),
        ],
    )
    result = run_daily()
    assert result.success

    assert set(summary_rows(database_url)) == {"t-target"}
    assert metric_values(database_url, "active_tenants") == {"all": 1}
    assert metric_values(database_url, "tenants_by_priority")["P0"] == 1
    assert metric_values(database_url, "entered_active") == {"new": 1, "sales_owned": 0}
    meta = materialization_metadata(result, "daily_summary")
    assert meta["new_p0"] == 1 and meta["new_p1"] == 0
    for path in (home / "reports" / "daily" / DAY).iterdir():
        content = path.read_text(encoding="utf-8")
        assert "so-tenant" not in content and "Sales Owned Big Co" not in content, path.name
    assert "so-tenant" not in meta["summary"]


def test_rerun_gives_identical_rows_and_replaces_the_partition(
    database_url: str, run_daily
) -> None:
    insert_rows(database_url, ACTIVE, scenario())
    first = run_daily()
    tables = ("apac_daily_summary_tenants", "apac_daily_summary_metrics")
    before = {t: table_hash(database_url, t) for t in tables}

    second = run_daily()
    assert second.success and second.run_id != first.run_id
    assert {t: table_hash(database_url, t) for t in tables} == before
    assert materialization_metadata(second, "daily_summary")["rows_written"] == 0
    # unchanged rows keep the run that wrote them
    assert query(database_url, "SELECT DISTINCT run_id FROM apac_daily_summary_tenants") == [
        (first.run_id,)
    ]

    # a tenant whose priority changed again later leaves the day's list; another changes
    execute(
        database_url,
        "UPDATE apac_active_tenants SET priority_changed_partition = '2026-11-19' "
        "WHERE tenant_id = 't-up'",
    )
    execute(
        database_url,
        "UPDATE apac_active_tenants SET total_score = 79.25 WHERE tenant_id = 't-new-p1'",
    )
    third = run_daily()
    rows = summary_rows(database_url)
    assert set(rows) == {"t-target", "t-new-p1", "t-down", "t-carried"}
    assert rows["t-new-p1"][-1] == Decimal("79.25")
    run_ids = dict(query(database_url, "SELECT tenant_id, run_id FROM apac_daily_summary_tenants"))
    assert run_ids == {
        "t-target": first.run_id,
        "t-new-p1": third.run_id,
        "t-down": first.run_id,
        "t-carried": first.run_id,
    }
    assert metric_values(database_url, "changed_top_priority") == {"P0": 0, "P1": 0}
    # the later state is flagged: apac_active_tenants already reflects 2026-11-19
    assert materialization_metadata(third, "daily_summary")["state_partition"] == "2026-11-19"


def test_files_are_written_and_tenant_text_is_escaped(
    database_url: str, run_daily, home: Path
) -> None:
    hostile = "<script>alert(1)</script>"
    insert_rows(
        database_url,
        ACTIVE,
        [
            bucket_row(
                "t-xss",
                name=hostile,
                email="ceo@secret-customer.example",
                priority="P1",
                total_score=Decimal("90.00"),
                priority_changed_partition=DAY,
            ),
            bucket_row(
                "t-email-name",
                name="株式会社 | Contact jane.doe@acme.example",
                priority="P1",
                total_score=Decimal("80.00"),
                priority_changed_partition=DAY,
            ),
            bucket_row(
                "t-formula",
                name='=HYPERLINK("http://evil.example","x")',
                priority="P1",
                total_score=Decimal("75.00"),
                priority_changed_partition=DAY,
            ),
        ],
    )
    result = run_daily()
    assert result.success
    directory = home / "reports" / "daily" / DAY
    assert sorted(p.name for p in directory.iterdir()) == [
        "metrics.csv",
        "notes.csv",
        "summary.csv",
        "summary.html",
        "summary.md",
    ]
    page = (directory / "summary.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Operations" not in page  # MORPHEUS_SUBSCRIPTION_ID unset: no CRM notes
    assert (directory / "notes.csv").read_text(
        encoding="utf-8"
    ) == "partition,severity,title,line\n"
    assert materialization_metadata(result, "daily_summary")["operations_notes"] == {
        "error": 0,
        "warning": 0,
        "ok": 0,
    }
    assert "株式会社 | Contact j***@acme.example" in page

    everything = [p.read_text(encoding="utf-8") for p in directory.iterdir()]
    everything.append(materialization_metadata(result, "daily_summary")["summary"])
    for content in everything:
        assert "jane.doe@acme.example" not in content
        assert "secret-customer" not in content
    assert "<script" not in everything[-1]  # the Markdown metadata too
    assert "\\|" in everything[-1]  # a pipe in a name cannot break the Markdown table

    with (directory / "summary.csv").open(encoding="utf-8", newline="") as handle:
        records = {r["tenant_id"]: r for r in csv.DictReader(handle)}
    assert set(records) == {"t-xss", "t-email-name", "t-formula"}
    assert records["t-xss"]["name"] == hostile  # plain text in CSV, as data
    assert records["t-formula"]["name"].startswith("'=HYPERLINK(")
    assert records["t-email-name"]["why"] == "score 80"
    # the stored report row carries the masked name as well
    assert query(
        database_url, "SELECT name FROM apac_daily_summary_tenants WHERE tenant_id = 't-email-name'"
    ) == [("株式会社 | Contact j***@acme.example",)]
    metrics = list(csv.reader(io.StringIO((directory / "metrics.csv").read_text())))
    assert ["2026-11-18", "tenants_by_priority", "P1", "3"] in metrics


def test_snapshot_health_line_stale_and_unavailable(
    database_url: str, run_daily, home: Path
) -> None:
    insert_rows(database_url, ACTIVE, scenario()[:2])
    page = home / "reports" / "daily" / DAY / "summary.html"
    assert run_daily().success
    assert "HubSpot target snapshot: UNAVAILABLE" in page.read_text(encoding="utf-8")
    assert metric_values(database_url, "snapshot_status")["unavailable"] == 1

    record_sync(database_url, status="failed", hours_ago=30)
    result = run_daily()
    text = page.read_text(encoding="utf-8")
    assert "HubSpot target snapshot: STALE" in text and "30.0 h old" in text
    assert "HubSpot 503" not in text  # the raw error stays in the sync state, not the report
    assert metric_values(database_url, "snapshot_status") == {
        "fresh": 0,
        "stale": 1,
        "unavailable": 0,
    }
    assert materialization_metadata(result, "daily_summary")["snapshot_status"] == "stale"


def _long_list(count: int) -> list[dict]:
    """``count`` tenants new at P1 on DAY, scores all different (the report order is the score,
    highest first), every seventh with an email in its name."""
    return [
        bucket_row(
            f"t-{i:05d}",
            name=f"Owner{i}@mail.example's shop" if i % 7 == 0 else f"Shop {i}",
            priority="P1",
            calculated_priority="P1",
            total_score=Decimal(90_000 - i) / 1000,
            priority_changed_partition=DAY,
            bucket_entered_partition=DAY,
        )
        for i in range(count)
    ]


def _publish(
    database_url: str,
    home: Path,
    *,
    chunk_size: int,
    run_id: str = "run-1",
    notes: tuple[OperationsNote, ...] = (),
):
    return publish_daily_summary(
        partial(get_session, database_url),
        list_id=LIST_ID,
        partition_key=DAY,
        run_id=run_id,
        home=home,
        chunk_size=chunk_size,
        notes=notes,
    )


OUTBOX_ERROR = OperationsNote(
    "HubSpot outbox",
    "error",
    (
        "3 updates could not be written to HubSpot and will not be tried again on their own.",
        "3 × <script>alert(1)</script>",
        "Once the cause is fixed, run `morpheus outbox retry` to send them again.",
    ),
)


def test_the_operations_notes_are_rendered_and_never_stored(database_url: str, home: Path) -> None:
    """The notes reach summary.html, summary.md and notes.csv; the stored rows are those of
    a run without notes; a later run without notes leaves none of them behind."""
    insert_rows(database_url, ACTIVE, scenario())
    record_sync(database_url)
    _publish(database_url, home, chunk_size=10)
    tables = ("apac_daily_summary_tenants", "apac_daily_summary_metrics")
    before = {t: table_hash(database_url, t) for t in tables}

    noted = _publish(database_url, home, chunk_size=10, run_id="run-2", notes=(OUTBOX_ERROR,))
    assert noted.rows_written == 0
    assert {t: table_hash(database_url, t) for t in tables} == before
    directory = home / "reports" / "daily" / DAY
    assert noted.files["notes_csv"] == directory / "notes.csv"
    page = (directory / "summary.html").read_text(encoding="utf-8")
    assert '<div class="note note-error"><p><strong>ERROR · HubSpot outbox</strong>' in page
    assert "<li>3 × &lt;script&gt;alert(1)&lt;/script&gt;</li>" in page and "<script" not in page
    markdown = (directory / "summary.md").read_text(encoding="utf-8")
    assert "#### Operations" in markdown and "**ERROR · HubSpot outbox**" in markdown
    with (directory / "notes.csv").open(encoding="utf-8", newline="") as handle:
        notes = list(csv.DictReader(handle))
    assert [(n["severity"], n["title"]) for n in notes] == [("error", "HubSpot outbox")] * 3
    assert notes[2]["line"].endswith("run `morpheus outbox retry` to send them again.")
    assert noted.summary.counts()["operations_notes"] == {"error": 1, "warning": 0, "ok": 0}

    _publish(database_url, home, chunk_size=10, run_id="run-3")
    assert "Operations" not in (directory / "summary.html").read_text(encoding="utf-8")
    assert "Operations" not in (directory / "summary.md").read_text(encoding="utf-8")
    assert (directory / "notes.csv").read_text(
        encoding="utf-8"
    ) == "partition,severity,title,line\n"


def test_a_kept_day_keeps_the_notes_it_was_published_with(database_url: str, home: Path) -> None:
    """Once a later partition is routed, re-running an older day keeps what Sales was told
    that day, Operations section included; the new run's notes are not applied to it."""
    insert_rows(database_url, ACTIVE, scenario())
    record_sync(database_url)
    _publish(database_url, home, chunk_size=10, notes=(OUTBOX_ERROR,))
    directory = home / "reports" / "daily" / DAY
    published = {p.name: p.read_bytes() for p in directory.iterdir()}
    execute(
        database_url,
        "INSERT INTO apac_routing_decision_days (partition_key, run_id, snapshot_status) "
        "VALUES ('2026-11-19', 'routing-run', 'fresh'); "
        "INSERT INTO apac_routing_decision_versions (tenant_id, valid_from, run_id, "
        "routing_rule, ambiguous_match, sales_owned_match, moved, decided_at, decided_for) "
        "VALUES ('t-target', '2026-11-19', 'routing-run', 'active', false, false, false, now(), "
        "'2026-11-19')",
    )
    ok = OperationsNote("HubSpot outbox", "ok", ("12 written to HubSpot in the last day.",))
    kept = _publish(database_url, home, chunk_size=10, run_id="run-2", notes=(ok,))
    assert kept.kept and kept.live_partition == "2026-11-19"
    assert {p.name: p.read_bytes() for p in directory.iterdir()} == published


def test_a_long_list_streams_whole_into_the_table_and_the_csv_and_is_shown_in_part(
    database_url: str, home: Path, tmp_path: Path
) -> None:
    """The listed tenants pass in chunks: the table and summary.csv get every one, in report
    order, exactly as when the list is read in one chunk; memory keeps only the rows the HTML
    shows (docs/reports.md)."""
    count = MAX_SHOWN_TENANTS + 57
    with get_session(database_url) as session:  # one executemany: the rows share their columns
        rows = _long_list(count)
        columns = list(rows[0])
        session.execute(
            text(
                f"INSERT INTO {ACTIVE} ({', '.join(columns)}) "
                f"VALUES ({', '.join(':' + c for c in columns)})"
            ),
            rows,
        )
    record_sync(database_url)
    with get_session(database_url) as session:  # the read really is chunked
        chunks = DailySummaryRepository().changed_top_priorities(
            session, partition_key=DAY, chunk_size=300
        )
        assert [len(chunk) for chunk in chunks] == [300] * 6 + [count - 1800]

    chunked = _publish(database_url, home, chunk_size=300)
    assert chunked.summary.tenant_count == count
    assert len(chunked.summary.tenants) == MAX_SHOWN_TENANTS
    assert chunked.summary.metrics["new_top_priority"] == {"P0": 0, "P1": count}
    stored = query(
        database_url,
        "SELECT tenant_id, name FROM apac_daily_summary_tenants WHERE partition_key = :p "
        "ORDER BY total_score DESC",
        p=DAY,
    )
    assert [t for t, _ in stored] == [f"t-{i:05d}" for i in range(count)]
    assert stored[7][1] == "o***@mail.example's shop"  # masked in every chunk
    lines = (home / "reports" / "daily" / DAY / "summary.csv").read_text().splitlines()
    assert len(lines) == 1 + count
    assert [line.split(",")[4] for line in lines[1:]] == [t for t, _ in stored]
    page = (home / "reports" / "daily" / DAY / "summary.html").read_text()
    assert f"({count:,})" in page and "…and 57 more: see summary.csv." in page
    assert f"t-{MAX_SHOWN_TENANTS - 1:05d}" in page and f"t-{MAX_SHOWN_TENANTS:05d}" not in page

    whole_home = tmp_path / "whole"
    whole = _publish(database_url, whole_home, chunk_size=count)  # a re-run: nothing changes
    assert whole.rows_written == 0
    csv_path = Path("reports") / "daily" / DAY / "summary.csv"
    assert (whole_home / csv_path).read_bytes() == (home / csv_path).read_bytes()
    assert whole.summary.tenants.equals(chunked.summary.tenants)


def test_a_summary_that_fails_late_leaves_the_published_one_whole(
    database_url: str, home: Path
) -> None:
    """summary.csv is streamed while the rows are written; when the write fails after the
    last chunk, neither the file nor the table of the earlier publication changes."""
    insert_rows(database_url, ACTIVE, scenario())
    record_sync(database_url)
    _publish(database_url, home, chunk_size=2)
    csv_path = home / "reports" / "daily" / DAY / "summary.csv"
    published, rows = csv_path.read_bytes(), table_hash(database_url, "apac_daily_summary_tenants")

    execute(database_url, f"UPDATE {ACTIVE} SET total_score = total_score + 1")
    # The metrics are written after every tenant chunk: make that write fail.
    execute(
        database_url,
        "ALTER TABLE apac_daily_summary_metrics ADD CONSTRAINT refuse CHECK (value < 0) NOT VALID",
    )
    with pytest.raises(psycopg.errors.CheckViolation):
        _publish(database_url, home, chunk_size=2, run_id="run-2")
    assert csv_path.read_bytes() == published
    assert table_hash(database_url, "apac_daily_summary_tenants") == rows
    assert not [p.name for p in csv_path.parent.iterdir() if p.name.startswith(".")]
