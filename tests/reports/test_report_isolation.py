"""Daily Summary and Weekly Metrics SQL reference only ``apac_active_tenants`` (docs/reports.md).

The run-time proof takes the Sales-owned table away inside the test database (renamed), so
any statement that touches it — through SQLAlchemy, the ORM or a raw psycopg cursor — fails
with ``UndefinedTable``, and then runs both report assets, which must still succeed.
"""

from __future__ import annotations

import re
from decimal import Decimal

import psycopg
import pytest

from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.tenants.store.reports import (
    ACTIVE_FIGURES_SQL,
    ACTIVE_TENANT_QUERIES,
    CHANGED_TOP_PRIORITIES_SQL,
)
from tests.support.reports import DAY, bucket_row, insert_rows, query

TABLE_REFERENCE = re.compile(r"\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_.]*)", re.IGNORECASE)


def test_every_report_query_names_only_the_active_table() -> None:
    assert set(ACTIVE_TENANT_QUERIES) == {CHANGED_TOP_PRIORITIES_SQL, ACTIVE_FIGURES_SQL}
    for statement in ACTIVE_TENANT_QUERIES:
        assert set(TABLE_REFERENCE.findall(statement)) == {"apac_active_tenants"}, statement
        assert "sales_owned_tenants" not in statement


def test_reports_run_with_the_sales_owned_table_gone(
    database_url: str, run_daily, run_weekly
) -> None:
    insert_rows(
        database_url,
        "apac_active_tenants",
        [
            bucket_row(
                "t-a", priority="P1", total_score=Decimal("75"), priority_changed_partition=DAY
            )
        ],
    )
    insert_rows(
        database_url,
        "apac_sales_owned_tenants",
        [bucket_row("s-1", priority="P0", priority_changed_partition=DAY)],
    )
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute("ALTER TABLE apac_sales_owned_tenants RENAME TO hidden_sales_owned")
        # the trap works: any statement naming the table now fails
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT count(*) FROM apac_sales_owned_tenants")

    assert run_daily().success
    assert run_weekly().success
    assert query(database_url, "SELECT tenant_id FROM apac_daily_summary_tenants") == [("t-a",)]
    assert query(
        database_url,
        "SELECT value FROM apac_weekly_metrics WHERE metric = 'week_new_top_priority' "
        "AND dimension = 'P1'",
    ) == [(Decimal("1.00"),)]
