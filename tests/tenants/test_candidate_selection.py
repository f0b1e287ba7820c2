"""Selecting a partition's candidates: the first day copies the source rows straight into
the candidate versions; every later day or re-run stages them and writes only what changed.
Both must give the same rows."""

from __future__ import annotations

from datetime import datetime
from functools import partial

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.day_versions import copy_day_if_empty
from morpheus_pipelines.tenants.steps.tenant_selection import candidate_query, select_partition
from morpheus_pipelines.tenants.store.day_tables import CANDIDATE_VERSIONS
from morpheus_pipelines.tenants.store.tenant_candidate import candidate_rows
from tests.support.pipeline import SCHEMA, load_source, tenant

FIRST, SECOND = "2026-11-27", "2026-11-28"
FORCED = frozenset({"t-forced"})
# Every column but the run's own (which partition, which run, when).
COMPARED = (
    "tenant_id, source_type, custom_id, name, email, sales_owner_email, status, plan, seats, "
    "active_users_30d, signup_at, last_active_at, forced_sales_owned, rejection_reason"
)


def _rows(database_url: str, partition_key: str) -> list[tuple]:
    with get_session(database_url) as session:
        return [
            tuple(row)
            for row in session.connection().exec_driver_sql(
                f"SELECT {COMPARED} FROM apac_tenant_candidates "
                "WHERE partition_key = %(p)s ORDER BY tenant_id",
                {"p": partition_key},
            )
        ]


def _select(database_url: str, partition_key: str, run_id: str) -> dict[str, int]:
    factory = partial(get_session, database_url)
    return select_partition(
        factory,
        factory,
        schema=SCHEMA,
        partition_key=partition_key,
        run_id=run_id,
        forced_ids=FORCED,
    )


def _load_new(database_url: str, partition_key: str, run_id: str) -> int | None:
    with get_session(database_url) as session, get_session(database_url) as source:
        return copy_day_if_empty(
            session,
            CANDIDATE_VERSIONS,
            day=partition_key,
            rows=candidate_rows(
                candidate_query(SCHEMA, partition_key, forced_ids=FORCED),
                run_id=run_id,
                forced_ids=FORCED,
            ),
            source=source,
        )


def test_a_first_run_copies_what_a_rerun_would_upsert(database_url: str) -> None:
    load_source(
        database_url,
        [
            tenant("t-active"),
            tenant("t-forced", status="closing", region="EMEA"),
            tenant("   ", email="blank@id.example.com"),
            tenant(
                "t-signup",
                created_at=datetime.fromisoformat("2026-11-27T03:00:00+00:00"),
                status="new_user",
            ),
            tenant("t-trial", status="free_trial"),
        ],
    )
    # No version valid on the day: the rows are copied straight in.
    assert _load_new(database_url, FIRST, "run-1") == 4
    copied = _rows(database_url, FIRST)
    assert [(r[0], r[1], r[-2], r[-1]) for r in copied] == [
        ("   ", "active", False, "blank tenant id"),
        ("t-active", "active", False, None),
        ("t-forced", "active", True, None),
        ("t-signup", "signup", False, None),
    ]
    # Not empty any more: the copy declines and writes nothing, and a re-run over the
    # unchanged source writes nothing (any column the copy computed differently would be
    # rewritten and counted).
    assert _load_new(database_url, FIRST, "run-2") is None
    assert _select(database_url, FIRST, "run-2")["rows_written"] == 0
    assert _rows(database_url, FIRST) == copied

    # The comparing path writes what the copy wrote: the next day removes only the signup
    # of the day before; the versions it carries are spoiled, and a re-run of that day
    # writes them back.
    assert _select(database_url, SECOND, "run-3")["rows_written"] == 1
    with get_session(database_url) as session:
        session.connection().exec_driver_sql(
            "UPDATE apac_tenant_candidate_versions SET name = 'stale', forced_sales_owned = NOT "
            "forced_sales_owned, rejection_reason = 'stale'"
        )
    # The signup of the 27th is not a candidate of the 28th (status new_user).
    expected = [r for r in copied if r[0] != "t-signup"]
    assert _select(database_url, SECOND, "run-4")["rows_written"] == len(expected) == 3
    assert _rows(database_url, SECOND) == expected
