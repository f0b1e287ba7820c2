"""Helpers for the report tests: tenant rows written straight into the bucket tables, SQL on
the test's database, and the metadata of a report run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import dagster as dg
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session

DAY = "2026-11-18"  # a Wednesday
WEEK = "2026-11-16"  # Monday of DAY's week
LIST_ID = "19544"

Runner = Callable[..., dg.ExecuteInProcessResult]


def bucket_row(tenant_id: str, **values: Any) -> dict[str, Any]:
    """A scored bucket-table row; ``values`` override the defaults."""
    row: dict[str, Any] = {
        "tenant_id": tenant_id,
        "name": f"Tenant {tenant_id}",
        "email": f"owner@{tenant_id}.customer.example",
        "status": "active",
        "source_type": "active",
        "total_score": Decimal("50.00"),
        "calculated_priority": "P2",
        "priority": "P2",
        "priority_reason": "score",
        "scored_at": datetime(2026, 11, 19, tzinfo=UTC),
        "previous_priority": None,
        "priority_changed_partition": "2026-10-01",
        "bucket_entered_partition": "2026-10-01",
        "entered_from": "new",
        "hubspot_target": False,
        "partition_key": "2026-10-01",
        "run_id": "routing-run",
    }
    row.update(values)
    return row


def insert_rows(database_url: str, table: str, rows: list[dict[str, Any]]) -> None:
    assert table in ("apac_active_tenants", "apac_sales_owned_tenants")
    with get_session(database_url) as session:
        for row in rows:
            columns = ", ".join(row)
            params = ", ".join(f":{c}" for c in row)
            session.execute(text(f"INSERT INTO {table} ({columns}) VALUES ({params})"), row)


def query(database_url: str, statement: str, **params: Any) -> list[tuple]:
    with get_session(database_url) as session:
        return [tuple(r) for r in session.execute(text(statement), params).all()]


def execute(database_url: str, statement: str, **params: Any) -> int:
    """Run a write statement; returns the number of rows it touched."""
    with get_session(database_url) as session:
        return session.execute(text(statement), params).rowcount


def record_sync(database_url: str, *, status: str = "success", hours_ago: float = 2.0) -> None:
    """A sync-state row: last success ``hours_ago``; last attempt ``status``."""
    synced_at = datetime.now(UTC).replace(microsecond=0)
    synced_at = synced_at.fromtimestamp(synced_at.timestamp() - hours_ago * 3600, UTC)
    with get_session(database_url) as session:
        session.execute(
            text(
                "INSERT INTO apac_hubspot_target_sync_state (list_id, last_successful_sync_id, "
                "last_successful_sync_at, last_successful_list_total, last_attempt_at, "
                "last_attempt_status, last_error) VALUES (:l, 'sync-1', :t, 8, now(), :s, "
                "CASE WHEN :s = 'failed' THEN 'HubSpot 503' END)"
            ),
            {"l": LIST_ID, "t": synced_at, "s": status},
        )


def materialization_metadata(result: dg.ExecuteInProcessResult, key: str) -> dict[str, Any]:
    """The metadata values (plain Python) of the run's materialization of ``key``."""
    events = result.asset_materializations_for_node(key)
    assert len(events) == 1
    return {name: value.value for name, value in events[0].metadata.items()}
