"""The repository contract (session first, options keyword-only, no transaction owned)
against the real, migrated schema."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pandas as pd
import psycopg
import pytest
from sqlalchemy import select, text

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.tenants.store import (
    DailySummaryRepository,
    HubSpotTargetAccountRepository,
    HubSpotTargetSyncStateRepository,
    RepositoryError,
    TenantScoreSnapshotRepository,
)
from morpheus_pipelines.tenants.store.models import DailySummaryTenant, HubSpotTargetSyncState

sync_state_repo = HubSpotTargetSyncStateRepository()
account_repo = HubSpotTargetAccountRepository()
# A table keyed by partition and tenant.
summary_repo = DailySummaryRepository()
NOW = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)


def _account(company_id: str, **overrides: object) -> dict:
    row = {
        "hubspot_company_id": company_id,
        "name": f"Company {company_id}",
        "domain": f"c{company_id}.com.au",
        "sync_id": "s1",
        "synced_at": NOW,
    }
    row.update(overrides)
    return row


def _summary_row(tenant_id: str, partition: str = "2026-11-29") -> dict:
    return {
        "partition_key": partition,
        "tenant_id": tenant_id,
        "priority": "P1",
        "change": "new",
        "reason": "a reason",
        "run_id": "r1",
    }


def test_insert_then_get_by_id_and_missing_is_none(database_url: str) -> None:
    with get_session(database_url) as session:
        record = sync_state_repo.insert(session, {"list_id": "19544", "last_attempt_at": NOW})
        assert record.list_id == "19544"
    with get_session(database_url) as session:
        assert sync_state_repo.get_by_id(session, "19544").last_attempt_at == NOW
        assert sync_state_repo.get_by_id(session, "nope") is None


def test_scalars_stay_readable_after_commit(database_url: str) -> None:
    with get_session(database_url) as session:
        record = sync_state_repo.insert(session, {"list_id": "1"})
    # expire_on_commit=False: no DetachedInstanceError once the session is closed.
    assert record.list_id == "1"


def test_exception_rolls_back_every_write_in_the_block(database_url: str) -> None:
    with pytest.raises(RuntimeError, match="boom"), get_session(database_url) as session:
        sync_state_repo.insert(session, {"list_id": "a"})
        account_repo.insert(session, _account("1"))
        raise RuntimeError("boom")
    with get_session(database_url) as session:
        assert sync_state_repo.get_all(session) == []
        assert account_repo.get_all(session) == []


def test_database_error_propagates_and_rolls_back(database_url: str) -> None:
    from sqlalchemy.exc import IntegrityError

    with pytest.raises(IntegrityError), get_session(database_url) as session:
        sync_state_repo.insert(session, {"list_id": "a"})
        sync_state_repo.insert(session, {"list_id": "b", "last_attempt_status": "maybe"})
    with get_session(database_url) as session:
        assert sync_state_repo.get_by_id(session, "a") is None


def test_get_many_by_ids_and_composite_key_refused(database_url: str) -> None:
    with get_session(database_url) as session:
        account_repo.bulk_insert(session, [_account(str(i)) for i in range(5)])
    with get_session(database_url) as session:
        found = account_repo.get_many_by_ids(session, ["1", "3", "99"])
        assert sorted(a.hubspot_company_id for a in found) == ["1", "3"]
        assert account_repo.get_many_by_ids(session, []) == []
        with pytest.raises(ValueError, match="composite primary key"):
            summary_repo.get_many_by_ids(session, [("2026-11-29", "t1")])


def test_get_all_pages_in_key_order(database_url: str) -> None:
    with get_session(database_url) as session:
        account_repo.bulk_insert(session, [_account(f"{i:02d}") for i in range(7)])
        first = account_repo.get_all(session, limit=3)
        second = account_repo.get_all(session, limit=3, offset=3)
        rest = account_repo.get_all(session, limit=100, offset=6)
    assert [a.hubspot_company_id for a in first] == ["00", "01", "02"]
    assert [a.hubspot_company_id for a in second] == ["03", "04", "05"]
    assert [a.hubspot_company_id for a in rest] == ["06"]


def test_filter_by_and_first_by(database_url: str) -> None:
    with get_session(database_url) as session:
        account_repo.bulk_insert(
            session, [_account("1", portal_id="p"), _account("2", portal_id="p"), _account("3")]
        )
        assert {a.hubspot_company_id for a in account_repo.filter_by(session, portal_id="p")} == {
            "1",
            "2",
        }
        assert account_repo.first_by(session, portal_id="p").hubspot_company_id == "1"
        assert account_repo.first_by(session, portal_id="zzz") is None
        with pytest.raises(RepositoryError, match="unknown column"):
            account_repo.filter_by(session, no_such_column=1)


def test_update_and_update_by_id(database_url: str) -> None:
    with get_session(database_url) as session:
        record = sync_state_repo.insert(session, {"list_id": "1"})
        sync_state_repo.update(session, record, {"last_error": "x"})
        assert sync_state_repo.update_by_id(session, "missing", {"last_error": "y"}) is None
        updated = sync_state_repo.update_by_id(session, "1", {"last_attempt_status": "failed"})
        assert (updated.last_error, updated.last_attempt_status) == ("x", "failed")


def test_upsert_is_idempotent_and_returns_the_row(database_url: str) -> None:
    data = _account("42", portal_id="p42")
    with get_session(database_url) as session:
        first = account_repo.upsert(session, data, conflict_columns=["hubspot_company_id"])
        second = account_repo.upsert(session, data, conflict_columns=["hubspot_company_id"])
        assert first.portal_id == second.portal_id == "p42"
    with get_session(database_url) as session:
        changed = account_repo.upsert(
            session,
            {**data, "portal_id": None, "name": "Renamed"},
            conflict_columns=["hubspot_company_id"],
            update_columns=["portal_id"],
        )
        # only the named update column changed; NULL overwrote the old value
        assert changed.portal_id is None
        assert changed.name == "Company 42"
        assert len(account_repo.get_all(session)) == 1


def test_upsert_refuses_conflict_columns_without_unique_constraint(database_url: str) -> None:
    with get_session(database_url) as session, pytest.raises(RepositoryError) as error:
        account_repo.upsert(session, _account("1", portal_id="p"), conflict_columns=["portal_id"])
    message = str(error.value)
    assert "apac_hubspot_target_accounts" in message
    assert "portal_id" in message
    assert "hubspot_company_id" in message  # says which sets would work


def test_upsert_composite_key(database_url: str) -> None:
    with get_session(database_url) as session:
        for run in ("r1", "r2"):
            summary_repo.upsert(
                session,
                {**_summary_row("t1"), "run_id": run},
                conflict_columns=["partition_key", "tenant_id"],
            )
        rows = summary_repo.filter_by(session, tenant_id="t1")
    assert [(r.partition_key, r.run_id) for r in rows] == [("2026-11-29", "r2")]


def test_upsert_update_columns_must_be_in_data(database_url: str) -> None:
    with get_session(database_url) as session, pytest.raises(RepositoryError, match="name"):
        account_repo.upsert(
            session,
            {"hubspot_company_id": "1", "sync_id": "s", "synced_at": NOW},
            conflict_columns=["hubspot_company_id"],
            update_columns=["name"],
        )


def _wait_until_blocked(admin_url: str, application_name: str) -> None:
    """Poll pg_stat_activity until the named connection waits on a lock (no fixed sleep)."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for _ in range(10_000):
            row = conn.execute(
                "SELECT wait_event_type FROM pg_stat_activity WHERE application_name = %s",
                (application_name,),
            ).fetchone()
            if row and row[0] == "Lock":
                return
        raise AssertionError(f"{application_name} never waited on a lock")


def test_two_sessions_upserting_the_same_key_concurrently(database_url: str) -> None:
    """The second upsert waits for the first to commit, then wins; no error, one row."""
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    blocked_engine = create_engine(database_url, connect_args={"application_name": "second_writer"})
    errors: list[BaseException] = []

    def second_writer() -> None:
        try:
            with Session(blocked_engine) as session, session.begin():
                account_repo.upsert(
                    session,
                    _account("7", name="second"),
                    conflict_columns=["hubspot_company_id"],
                )
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    with get_session(database_url) as first:
        account_repo.upsert(
            first, _account("7", name="first"), conflict_columns=["hubspot_company_id"]
        )
        thread = threading.Thread(target=second_writer)
        thread.start()
        _wait_until_blocked(
            database_url.replace("postgresql+psycopg", "postgresql"), "second_writer"
        )
    thread.join(timeout=30)
    blocked_engine.dispose()
    assert not errors
    with get_session(database_url) as session:
        names = session.scalars(
            select(text("name")).select_from(text("apac_hubspot_target_accounts"))
        ).all()
    assert names == ["second"]


def test_bulk_upsert_skips_unchanged_rows_and_overwrites_with_null(database_url: str) -> None:
    columns = [
        "hubspot_company_id",
        "name",
        "portal_id",
        "additional_domain_roots",
        "sync_id",
        "synced_at",
    ]
    rows = [(str(i), f"n{i}", f"p{i}", ["a.com", "b.com"], "s1", NOW) for i in range(100)]
    with get_session(database_url) as session:
        written = account_repo.bulk_upsert(
            session, rows, columns=columns, conflict_columns=["hubspot_company_id"]
        )
        assert written == 100
    with get_session(database_url) as session:
        again = account_repo.bulk_upsert(
            session, rows, columns=columns, conflict_columns=["hubspot_company_id"]
        )
        assert again == 0  # nothing changed, nothing written
        changed = [*rows[:99], ("99", "n99", None, None, "s1", NOW)]
        assert (
            account_repo.bulk_upsert(
                session, changed, columns=columns, conflict_columns=["hubspot_company_id"]
            )
            == 1
        )
        last = account_repo.get_by_id(session, "99")
        assert (last.portal_id, last.additional_domain_roots) == (None, None)
        assert account_repo.get_by_id(session, "3").additional_domain_roots == ["a.com", "b.com"]


def test_bulk_upsert_rejects_conflict_columns_without_unique_constraint(database_url: str) -> None:
    with get_session(database_url) as session, pytest.raises(RepositoryError, match="portal_id"):
        account_repo.bulk_upsert(
            session,
            [],
            columns=["hubspot_company_id", "portal_id"],
            conflict_columns=["portal_id"],
        )


def test_sync_state_status_constraint(database_url: str) -> None:
    with get_session(database_url) as session:
        sync_state_repo.insert(session, {"list_id": "1", "last_attempt_status": "success"})
        assert session.scalar(select(HubSpotTargetSyncState.last_attempt_status)) == "success"
        assert session.scalar(select(DailySummaryTenant)) is None


def test_staging_tables_are_analysed_with_a_small_sample(database_url: str) -> None:
    frame = pd.DataFrame({"tenant_id": [f"t-{i:05d}" for i in range(5_000)]})
    frame["tenant_bucket"] = ["active", "sales_owned"] * 2_500
    with get_session(database_url) as session:
        before = session.scalar(text("SELECT current_setting('default_statistics_target')"))
        staging = TenantScoreSnapshotRepository().copy_frame_into_staging(
            session, frame, columns=["tenant_id", "tenant_bucket"]
        )
        rows, bounds, target = session.execute(
            text(
                "SELECT c.reltuples, (SELECT cardinality(histogram_bounds::text::text[]) "
                "FROM pg_stats WHERE tablename = :t AND attname = 'tenant_id'), "
                "current_setting('default_statistics_target') "
                "FROM pg_class c WHERE c.relname = :t"
            ),
            {"t": staging},
        ).one()
    # Analysed (the planner knows its size), from a sample of 3,000 rows: a histogram of at
    # most 11 bounds where the server's default sample (100) would give 101; and the setting
    # is back to what it was for whatever the transaction analyses next.
    assert rows == 5_000
    assert bounds <= 11
    assert target == before == "100"


def test_copy_if_new_copies_a_new_partition_and_steps_aside_for_an_existing_key(
    database_url: str,
) -> None:
    def frame(*tenants: str) -> pd.DataFrame:
        return pd.DataFrame({"tenant_id": list(tenants), "priority": "P1"})

    def stored(session) -> list[tuple[str, str]]:
        return session.execute(
            text(
                "SELECT tenant_id, run_id FROM apac_daily_summary_tenants "
                "WHERE partition_key = '2026-11-29' ORDER BY tenant_id"
            )
        ).all()

    def copy(session, tenants: pd.DataFrame, run_id: str) -> int | None:
        return summary_repo.copy_frame_if_new(
            session,
            tenants,
            columns=["tenant_id", "priority"],
            constants={
                "partition_key": "2026-11-29",
                "run_id": run_id,
                "change": "new",
                "reason": "a reason",
            },
        )

    with get_session(database_url) as session:
        assert copy(session, frame("t-1", "t-2"), "r1") == 2
    with get_session(database_url) as session:
        # t-2 is there: nothing of this frame is written, and the transaction goes on (the
        # caller upserts instead), so t-3 below is committed with it.
        assert copy(session, frame("t-3", "t-2"), "r2") is None
        session.add(DailySummaryTenant(**_summary_row("t-3")))
        session.flush()
    with get_session(database_url) as session:
        assert stored(session) == [("t-1", "r1"), ("t-2", "r1"), ("t-3", "r1")]
        # Another constraint's violation is not taken for an existing key.
        with pytest.raises(psycopg.errors.NotNullViolation):
            copy(session, pd.DataFrame({"tenant_id": ["t-4"], "priority": [None]}), "r3")
