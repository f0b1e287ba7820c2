"""A first run's writes: bucket rows, routing inputs and score snapshots copied straight in
when none of their keys is there yet, with the same rows the upsert gives; a chunk's score
update reads its own key range; the bucket tables keep room on their pages and no index on a
score column, so scoring's update is HOT (docs/decisions/0054).

Which path a write took is seen in its transaction: the upsert stages its rows in a temporary
table first (``_stage_…``, dropped at commit), the copy does not (scoring's copy stages the
score columns alone, for the bucket update)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pandas as pd
import psycopg
from psycopg import sql
from sqlalchemy import text
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.platform.store.day_versions import finish_day
from morpheus_pipelines.tenants.store.day_tables import SCORE_VERSIONS
from morpheus_pipelines.tenants.store.models.tenants import ENRICHMENT_COLUMNS
from morpheus_pipelines.tenants.store.routing_decision import INPUT_COLUMNS
from morpheus_pipelines.tenants.store.store import TenantStore
from morpheus_pipelines.tenants.store.tenant_bucket import ROUTED_COLUMNS, TenantBucketRepository
from morpheus_pipelines.tenants.store.tenant_score_snapshot import (
    SCORE_FRAME_COLUMNS,
    bucket_score_update,
)

PARTITION = "2026-11-28"
# Bucket columns that depend on when or by which run a row was written.
STAMPS = ("updated_at", "run_id")
STAGED_COLUMNS = (
    "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
    "WHERE c.relpersistence = 't' AND c.relname LIKE '\\_stage\\_%' AND a.attnum > 0"
)


def staged_columns(session: Session) -> set[str]:
    """The columns of the staging tables the session's transaction has made so far."""
    return {name for (name,) in session.execute(text(STAGED_COLUMNS))}


def in_session(database_url: str, work: Callable[[Session], object]) -> tuple[object, set[str]]:
    """``work``'s result and the columns it staged, in one committed transaction."""
    with get_session(database_url) as session:
        return work(session), staged_columns(session)


def routed(tenants: dict[str, str]) -> pd.DataFrame:
    """Bucket rows (``ROUTED_COLUMNS`` and ``tenant_bucket``) of ``tenant_id → bucket``."""
    rows = []
    for n, (tenant_id, bucket) in enumerate(tenants.items()):
        row: dict[str, object] = dict.fromkeys((*ROUTED_COLUMNS, *ENRICHMENT_COLUMNS))
        row.update(
            tenant_id=tenant_id,
            name=f"Tenant {n}",
            email=f"owner{n}@example.com.au",
            status="paid",
            source_type="active",
            seats=n + 1,
            hubspot_target=False,
            routing_rule="default_active" if bucket == "active" else "sales_owner_email",
            hubspot_snapshot_status="fresh",
            hubspot_sync_id="sync-1",
            hubspot_snapshot_synced_at=datetime(2026, 11, 28, 1, 2, 3, tzinfo=UTC),
            tenant_bucket=bucket,
        )
        rows.append(row)
    return pd.DataFrame(rows)


def bucket_rows(database_url: str, tenant_ids: list[str]) -> dict[str, tuple[str, dict]]:
    """``tenant_id → (table, row without its stamps)`` for the tenants in either table."""
    found = {}
    with get_session(database_url) as session:
        for table in ("apac_active_tenants", "apac_sales_owned_tenants"):
            for row in session.execute(
                text(f"SELECT * FROM {table} WHERE tenant_id = ANY(:ids)"), {"ids": tenant_ids}
            ).mappings():
                found[row["tenant_id"]] = (
                    table,
                    {k: v for k, v in row.items() if k not in STAMPS},
                )
    return found


def move(
    database_url: str, frame: pd.DataFrame, run_id: str = "run-1", forced: str | None = None
) -> tuple[dict[str, int], set[str]]:
    """Route ``frame`` as one batch; (rows written per bucket, the columns it staged)."""

    def work(session: Session) -> dict[str, int]:
        return (
            TenantStore(session)
            .buckets.move_batch(
                session, frame, partition_key=PARTITION, run_id=run_id, forced_priority=forced
            )
            .written
        )

    return in_session(database_url, work)


def test_a_batch_of_new_tenants_is_copied_in_as_the_upsert_would_write_it(
    database_url: str, database_factory
) -> None:
    batch = routed({"t-1": "active", "t-2": "sales_owned", "t-3": "active"})
    # Empty tables: the batch is copied straight in, nothing staged.
    assert move(database_url, batch) == ({"active": 2, "sales_owned": 1}, set())
    copied = bucket_rows(database_url, ["t-1", "t-2", "t-3"])

    # Another database where one unrelated row lies inside the batch's key range: the same
    # batch then goes through the staging table and the upsert.
    other = database_factory()
    move(other, routed({"t-2a": "active"}))
    written, staged = move(other, batch)
    assert written == {"active": 2, "sales_owned": 1}
    assert set(ROUTED_COLUMNS) <= staged
    upserted = bucket_rows(other, ["t-1", "t-2", "t-3"])

    assert copied == upserted
    assert copied["t-2"][0] == "apac_sales_owned_tenants"
    assert copied["t-1"][1]["entered_from"] == "new"
    assert copied["t-1"][1]["bucket_entered_partition"] == PARTITION
    assert copied["t-1"][1]["partition_key"] == PARTITION


def test_the_forced_ids_are_copied_in_with_their_priority(database_url: str) -> None:
    forced = routed({"t-forced-1": "sales_owned", "t-forced-2": "sales_owned"})
    assert move(database_url, forced, forced="P0") == ({"active": 0, "sales_owned": 2}, set())
    rows = bucket_rows(database_url, ["t-forced-1", "t-forced-2"])
    assert {row["priority"] for _, row in rows.values()} == {"P0"}


def test_a_tenant_of_the_other_bucket_in_the_batch_range_is_moved_not_copied(
    database_url: str,
) -> None:
    move(database_url, routed({"t-2": "sales_owned"}))
    with get_session(database_url) as session:
        session.execute(
            text(
                "UPDATE apac_sales_owned_tenants SET track_step = 'called', priority = 'P1' "
                "WHERE tenant_id = 't-2'"
            )
        )
    batch = routed({"t-1": "active", "t-2": "active", "t-3": "active"})

    _, staged = move(database_url, batch, run_id="run-2")

    assert set(ROUTED_COLUMNS) <= staged  # the upsert, not the copy
    rows = bucket_rows(database_url, ["t-1", "t-2", "t-3"])
    assert {tenant: table for tenant, (table, _) in rows.items()} == dict.fromkeys(
        ("t-1", "t-2", "t-3"), "apac_active_tenants"
    )
    assert rows["t-2"][1]["entered_from"] == "sales_owned"
    assert rows["t-2"][1]["track_step"] == "called"  # carried from the row it left
    with get_session(database_url) as session:
        assert TenantStore(session).buckets.overlap_count(session) == 0


def test_copying_without_the_key_range_check_would_leave_a_tenant_in_both_buckets(
    database_url: str,
) -> None:
    """Why the range is checked first: copied straight in, a tenant that is moving from the
    other bucket keeps its old row, and the buckets are no longer disjoint."""
    move(database_url, routed({"t-2": "sales_owned"}))
    batch = routed({"t-1": "active", "t-2": "active"})
    with get_session(database_url) as session:
        buckets = TenantBucketRepository()
        assert not buckets._key_range_is_free(session, batch["tenant_id"])
        buckets._copy_new_rows(session, batch, PARTITION, "run-2", None)
        assert buckets.overlap_count(session) == 1
        session.rollback()


def record_inputs(
    database_url: str, frame: pd.DataFrame, partition_key: str, run_id: str
) -> tuple[object, set[str]]:
    def work(session: Session) -> int:
        return TenantStore(session).routing_inputs.record(
            session, frame, partition_key=partition_key, run_id=run_id
        )

    return in_session(database_url, work)


def stored_inputs(database_url: str) -> list[tuple]:
    with get_session(database_url) as session:
        return sorted(
            session.execute(
                text(
                    "SELECT tenant_id, candidate_version, partition_key, run_id "
                    "FROM apac_routing_inputs"
                )
            ).all()
        )


def test_routing_inputs_are_copied_on_a_first_run_and_upserted_after(database_url: str) -> None:
    blank = dict.fromkeys(INPUT_COLUMNS)
    frame = pd.DataFrame([blank | {"tenant_id": t, "candidate_version": 1} for t in "ab"])

    assert record_inputs(database_url, frame, PARTITION, "run-1") == (2, set())
    assert stored_inputs(database_url) == [
        ("a", 1, PARTITION, "run-1"),
        ("b", 1, PARTITION, "run-1"),
    ]

    changed = frame.assign(candidate_version=[1, 2])
    written, staged = record_inputs(database_url, changed, "2026-11-29", "run-2")
    # A key already there: the upsert, which stamps the run on each row.
    assert written == 2 and set(INPUT_COLUMNS) <= staged
    assert stored_inputs(database_url) == [
        ("a", 1, "2026-11-29", "run-2"),
        ("b", 2, "2026-11-29", "run-2"),
    ]


def scores(tenants: dict[str, tuple[str, float, str]]) -> pd.DataFrame:
    """Score rows (``SCORE_FRAME_COLUMNS``) of ``tenant_id → (bucket, total, priority)``."""
    return pd.DataFrame(
        [
            {
                "tenant_id": tenant_id,
                "tenant_bucket": bucket,
                "score_model_version": "test",
                "total_score": total,
                "calculated_priority": priority,
                "priority": priority,
                "priority_reason": "score",
                "contributions": '{"plan": 1.0}',
                # Each tenant's input versions numbered by its place in the chunk.
                "candidate_version": number,
                "answer_version": None,
                "decision_version": number,
                "recency_key": None,
                "last_active_at": None,
                "recency_moves_from": None,
            }
            for number, (tenant_id, (bucket, total, priority)) in enumerate(tenants.items())
        ],
        columns=SCORE_FRAME_COLUMNS,
    )


def bucket_scores(database_url: str) -> dict[str, tuple]:
    with get_session(database_url) as session:
        return {
            tenant_id: (float(total), priority)
            for table in ("apac_active_tenants", "apac_sales_owned_tenants")
            for tenant_id, total, priority in session.execute(
                text(f"SELECT tenant_id, total_score, priority FROM {table}")
            )
            if total is not None
        }


def snapshots(database_url: str, partition_key: str) -> dict[str, tuple]:
    with get_session(database_url) as session:
        return {
            row[0]: tuple(row[1:])
            for row in session.execute(
                text(
                    "SELECT tenant_id, tenant_bucket, total_score, priority, contributions "
                    "FROM apac_tenant_score_snapshots WHERE partition_key = :p"
                ),
                {"p": partition_key},
            )
        }


def write(
    database_url: str, frame: pd.DataFrame, partition_key: str, run_id: str, live: bool = True
) -> tuple[object, set[str]]:
    """Write a chunk of the day's scores, and make the day's versions its rows."""

    def work(session: Session) -> dict[str, int]:
        written = TenantStore(session).scores.write_scores(
            session, frame, partition_key=partition_key, run_id=run_id, live=live
        )
        finish_day(session, SCORE_VERSIONS, day=partition_key)
        return written

    return in_session(database_url, work)


def test_a_first_run_copies_its_scores_in_and_stages_only_the_score_columns(
    database_url: str,
) -> None:
    move(database_url, routed({"t-1": "active", "t-2": "sales_owned"}))
    frame = scores({"t-1": ("active", 40.0, "P2"), "t-2": ("sales_owned", 70.0, "P1")})

    written, staged = write(database_url, frame, PARTITION, "run-1")

    assert written == {"snapshots": 2, "active": 1, "sales_owned": 1}
    assert "contributions" not in staged and {"tenant_id", "priority"} <= staged
    assert bucket_scores(database_url) == {"t-1": (40.0, "P2"), "t-2": (70.0, "P1")}
    assert snapshots(database_url, PARTITION)["t-1"][2] == "P2"


def test_a_backfill_s_first_run_copies_its_scores_and_leaves_the_buckets(
    database_url: str,
) -> None:
    move(database_url, routed({"t-1": "active"}))
    frame = scores({"t-1": ("active", 40.0, "P2")})

    assert write(database_url, frame, "2026-11-20", "run-old", live=False) == (
        {"snapshots": 1},
        set(),
    )
    assert bucket_scores(database_url) == {}


def test_a_partition_scored_again_is_written_as_the_rows_a_first_run_copies(
    database_url: str,
) -> None:
    move(database_url, routed({"t-1": "active", "t-2": "sales_owned"}))
    frame = scores({"t-1": ("active", 40.0, "P2"), "t-2": ("sales_owned", 70.0, "P1")})
    write(database_url, frame, PARTITION, "run-1")  # copied in
    copied = snapshots(database_url, PARTITION)

    # The second day already holds one of the tenants: the chunk is staged and written as the
    # day's change.
    write(database_url, frame.iloc[:1], "2026-11-29", "run-2")
    _, staged = write(database_url, frame, "2026-11-29", "run-2")
    assert "contributions" in staged

    assert snapshots(database_url, "2026-11-29") == copied
    # Re-run on the first partition with a changed input and score: a new version, and the
    # bucket follows.
    rescored = frame.assign(
        total_score=[41.0, 70.0], candidate_version=[frame["candidate_version"].max() + 1, 1]
    )
    assert write(database_url, rescored, PARTITION, "run-3")[0]["snapshots"] == 1
    assert float(snapshots(database_url, PARTITION)["t-1"][1]) == 41.0
    assert bucket_scores(database_url)["t-1"] == (41.0, "P2")


def test_score_chunks_update_every_bucket_row_of_their_own_tenants(database_url: str) -> None:
    move(database_url, routed({"t-1": "active", "t-2": "sales_owned", "t-3": "active"}))
    move(database_url, routed({"t-4": "active", "t-5": "active"}))
    first = scores({"t-1": ("active", 40.0, "P2"), "t-3": ("active", 90.0, "P0")})
    # A chunk whose range holds t-3 and t-5, neither of which it scores.
    second = scores({"t-2": ("sales_owned", 70.0, "P1"), "t-4": ("active", 10.0, "P3")})

    write(database_url, first, PARTITION, "run-1")
    write(database_url, second, PARTITION, "run-1")

    assert bucket_scores(database_url) == {
        "t-1": (40.0, "P2"),
        "t-2": (70.0, "P1"),
        "t-3": (90.0, "P0"),
        "t-4": (10.0, "P3"),
    }


def test_a_chunk_s_update_reads_its_key_range_through_the_primary_key(database_url: str) -> None:
    """Without the range, each chunk's update reads the whole table; with it, an index range
    scan of the chunk's keys (docs/decisions/0054)."""
    with psycopg.connect(libpq_url(database_url)) as conn:
        conn.execute(
            "INSERT INTO apac_active_tenants (tenant_id, name, hubspot_target) "
            "SELECT 't-' || lpad(i::text, 6, '0'), 'Tenant', false "
            "FROM generate_series(1, 20000) i"
        )
        conn.execute(
            "CREATE TEMP TABLE chunk AS SELECT tenant_id, 'active'::text AS tenant_bucket, "
            "50.0::numeric(6,2) AS total_score, 'P2'::text AS calculated_priority, "
            "'P2'::text AS priority, 'score'::text AS priority_reason "
            "FROM apac_active_tenants ORDER BY tenant_id LIMIT 4000 OFFSET 8000"
        )
        conn.execute("ANALYZE apac_active_tenants")
        conn.execute("ANALYZE chunk")

        def plan(in_range: bool) -> str:
            statement = bucket_score_update(
                sql.Identifier("chunk"),
                "active",
                "apac_active_tenants",
                PARTITION,
                in_range=in_range,
            )
            rows = conn.execute(sql.SQL("EXPLAIN (COSTS OFF) {}").format(statement)).fetchall()
            return "\n".join(line for (line,) in rows)

        assert "Seq Scan on apac_active_tenants" in plan(in_range=False)
        ranged = plan(in_range=True)
        assert "Seq Scan on apac_active_tenants" not in ranged
        assert "pk_apac_active_tenants" in ranged
        conn.rollback()


def test_write_scores_reads_only_its_chunk_s_range_of_the_bucket_table(
    database_url: str,
) -> None:
    """Scoring's own write of a chunk, on a bucket table far larger than the chunk: no
    sequential scan of the bucket table in its transaction (the server's count of this
    transaction's scans), where an update without the chunk's key range reads it whole."""
    with get_session(database_url) as session:
        session.execute(
            text(
                "INSERT INTO apac_active_tenants (tenant_id, name, hubspot_target) "
                "SELECT 't-' || lpad(i::text, 6, '0'), 'Tenant', false "
                "FROM generate_series(1, 20000) i"
            )
        )
    with get_session(database_url) as session:
        session.execute(text("ANALYZE apac_active_tenants"))
    chunk = [f"t-{i:06d}" for i in range(8001, 12001)]
    frame = scores(dict.fromkeys(chunk, ("active", 50.0, "P2")))

    def work(session: Session) -> tuple[dict[str, int], int]:
        written = TenantStore(session).scores.write_scores(
            session, frame, partition_key=PARTITION, run_id="run-1", live=True
        )
        seq_scans = session.execute(
            text("SELECT pg_stat_get_xact_numscans('apac_active_tenants'::regclass)")
        ).scalar_one()
        return written, seq_scans

    (written, seq_scans), _ = in_session(database_url, work)
    assert written == {"snapshots": 4000, "active": 4000, "sales_owned": 0}
    assert seq_scans == 0
    assert bucket_scores(database_url) == dict.fromkeys(chunk, (50.0, "P2"))


HOT_UPDATES = (
    "SELECT pg_stat_get_xact_tuples_updated('apac_active_tenants'::regclass), "
    "pg_stat_get_xact_tuples_hot_updated('apac_active_tenants'::regclass)"
)


def score_new_rows(database_url: str, n: int) -> tuple[int, int]:
    """Insert ``n`` unscored bucket rows and score them with scoring's own statement, in one
    transaction rolled back, on a connection of its own (a backend keeps counting until it
    reports its statistics); (rows updated, of them HOT)."""
    with psycopg.connect(libpq_url(database_url)) as conn:
        conn.execute(
            "INSERT INTO apac_active_tenants (tenant_id, name, hubspot_target) "
            "SELECT 't-' || i, repeat('x', 200), false FROM generate_series(1, %s) i",
            (n,),
        )
        conn.execute(
            "CREATE TEMP TABLE chunk ON COMMIT DROP AS SELECT tenant_id, "
            "'active'::text AS tenant_bucket, 50.0::numeric(6,2) AS total_score, "
            "'P2'::text AS calculated_priority, 'P2'::text AS priority, "
            "'score'::text AS priority_reason FROM apac_active_tenants"
        )
        conn.execute(
            bucket_score_update(sql.Identifier("chunk"), "active", "apac_active_tenants", PARTITION)
        )
        counts = conn.execute(HOT_UPDATES).fetchone()
        conn.rollback()
    return counts


def test_scoring_a_new_bucket_row_is_a_hot_update(database_url: str) -> None:
    updated, hot = score_new_rows(database_url, 2_000)
    # The last row of a page may not find room beside its first version.
    assert updated == 2_000 and hot >= 0.8 * updated
    # What the index on priority did to the same update (before 0054): none is HOT.
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        conn.execute("CREATE INDEX ix_priority ON apac_active_tenants (priority)")
    assert score_new_rows(database_url, 2_000) == (2_000, 0)


def test_a_day_that_changed_few_scores_keeps_the_statistics_it_had(database_url: str) -> None:
    """Finishing a day analyses the versions only when the run changed more than a tenth of
    the day's scores (as autovacuum would later): a quiet day's few changes leave the
    statistics of the last bulk write, the first day's copy refreshes them."""
    tenants = {f"t-{n:02d}": "active" for n in range(20)}
    move(database_url, routed(tenants))
    write(database_url, scores({t: ("active", 40.0, "P2") for t in tenants}), PARTITION, "run-1")

    def finished(wrote: int) -> float:
        def work(session: Session) -> float:
            TenantStore(session).scores.finish_day(
                session, partition_key=PARTITION, wrote=wrote, scores=20, held_before=False
            )
            return session.execute(
                text("SELECT reltuples FROM pg_class WHERE relname = 'apac_tenant_score_versions'")
            ).scalar_one()

        return in_session(database_url, work)[0]

    with get_session(database_url) as session:
        before = session.execute(
            text("SELECT reltuples FROM pg_class WHERE relname = 'apac_tenant_score_versions'")
        ).scalar_one()
    assert before != 20
    assert finished(wrote=2) == before
    assert finished(wrote=20) == 20
