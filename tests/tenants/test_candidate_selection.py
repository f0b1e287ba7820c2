"""Selecting a partition's candidates: the first day copies the source rows straight into
the candidate versions; every later day or re-run compares them and writes only what changed.
Both must give the same rows, whether the source table is in the warehouse database (read in
place) or in another one (streamed into a staging table)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial

import dagster as dg
import pytest

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.day_versions import copy_day_if_empty
from morpheus_pipelines.tenants.steps.tenant_selection import candidate_query, select_partition
from morpheus_pipelines.tenants.store.day_tables import CANDIDATE_VERSIONS
from morpheus_pipelines.tenants.store.tenant_candidate import candidate_rows
from tests.support.databases import DatabaseFactory
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


@dataclass(frozen=True)
class Source:
    """Where the source table is: ``url`` None, in the warehouse database itself; ``types``,
    the columns whose type differs from the candidates' (read as they are, they would not be
    what a staging table holds)."""

    url: str | None
    types: tuple[tuple[str, str], ...] = ()

    def load(self, warehouse_url: str, rows: list[dict]) -> None:
        url = self.url or warehouse_url
        load_source(url, rows)
        with get_session(url) as session:
            for column, kind in self.types:
                session.connection().exec_driver_sql(
                    f"ALTER TABLE {SCHEMA}.tenants ALTER COLUMN {column} TYPE {kind}"
                )

    def select(self, warehouse_url: str, partition_key: str, run_id: str) -> dict[str, int]:
        return select_partition(
            partial(get_session, self.url or warehouse_url),
            partial(get_session, warehouse_url),
            schema=SCHEMA,
            partition_key=partition_key,
            run_id=run_id,
            forced_ids=FORCED,
            source_in_warehouse=self.url is None,
        )

    @property
    def read_in_place(self) -> bool:
        return self.url is None and not self.types


SOURCES = {
    "in the warehouse": None,
    "in another database": "another",
    "in the warehouse, other types": None,
}


@pytest.fixture(params=list(SOURCES))
def source(request: pytest.FixtureRequest, database_factory: DatabaseFactory) -> Source:
    url = database_factory() if SOURCES[request.param] else None
    # Other spellings of the same values: compared as they are they would differ (an id of
    # another type, a wider integer), so these are streamed and converted as text.
    types = (("id", "varchar(64)"), ("seats", "bigint")) if "other types" in request.param else ()
    return Source(url, types)


def _declines(database_url: str, partition_key: str, source: Source) -> bool:
    """Whether the straight copy of the first day declines (a version is valid on the day)."""
    query = candidate_query(SCHEMA, partition_key, forced_ids=FORCED)
    with get_session(database_url) as session:
        return (
            copy_day_if_empty(
                session,
                CANDIDATE_VERSIONS,
                day=partition_key,
                rows=candidate_rows(query, run_id="never", forced_ids=FORCED),
                source=None,
            )
            is None
        )


def test_a_first_run_copies_what_a_rerun_would_upsert(database_url: str, source: Source) -> None:
    source.load(
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
    first = source.select(database_url, FIRST, "run-1")
    assert (first["rows_written"], first["source_read_in_place"]) == (4, source.read_in_place)
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
    assert _declines(database_url, FIRST, source)
    assert source.select(database_url, FIRST, "run-2")["rows_written"] == 0
    assert _rows(database_url, FIRST) == copied

    # The comparing path writes what the copy wrote: the next day removes only the signup
    # of the day before; the versions it carries are spoiled, and a re-run of that day
    # writes them back.
    assert source.select(database_url, SECOND, "run-3")["rows_written"] == 1
    with get_session(database_url) as session:
        session.connection().exec_driver_sql(
            "UPDATE apac_tenant_candidate_versions SET name = 'stale', forced_sales_owned = NOT "
            "forced_sales_owned, rejection_reason = 'stale'"
        )
    # The signup of the 27th is not a candidate of the 28th (status new_user).
    expected = [r for r in copied if r[0] != "t-signup"]
    assert source.select(database_url, SECOND, "run-4")["rows_written"] == len(expected) == 3
    assert _rows(database_url, SECOND) == expected


def test_the_asset_reads_a_source_in_the_warehouse_in_place_and_streams_any_other(
    database_url: str, source: Source
) -> None:
    from morpheus_pipelines.assets.tenants.selection import tenant_candidates
    from morpheus_pipelines.resources.routing import TenantRoutingResource
    from morpheus_pipelines.resources.warehouse import WarehouseResource

    warehouse = WarehouseResource(database_url=database_url, source_database_url=source.url or "")
    assert warehouse.source_in_warehouse() is (source.url is None)
    source.load(database_url, [tenant("t-active"), tenant("t-forced", status="closing")])
    result = dg.materialize(
        [tenant_candidates],
        partition_key=FIRST,
        resources={
            "warehouse": warehouse,
            "routing": TenantRoutingResource(forced_sales_owned_tenant_ids="t-forced"),
        },
    )
    assert result.success
    read = result.asset_materializations_for_node("tenant_candidates")[0].metadata
    assert read["source_read"].value == ("in place" if source.read_in_place else "streamed")
    assert [(r[0], r[-2]) for r in _rows(database_url, FIRST)] == [
        ("t-active", False),
        ("t-forced", True),
    ]


def test_a_source_url_equal_to_the_warehouse_s_is_the_warehouse(database_url: str) -> None:
    from morpheus_pipelines.resources.warehouse import WarehouseResource

    same = WarehouseResource(database_url=database_url, source_database_url=database_url)
    other = WarehouseResource(
        database_url=database_url, source_database_url=database_url + "_elsewhere"
    )
    assert same.source_in_warehouse()
    assert not other.source_in_warehouse()


def _estimated_versions(database_url: str) -> float:
    with get_session(database_url) as session:
        return (
            session.connection()
            .exec_driver_sql(
                "SELECT reltuples FROM pg_class WHERE relname = 'apac_tenant_candidate_versions'"
            )
            .scalar_one()
        )


def test_a_day_that_changed_few_candidates_keeps_the_statistics_it_had(database_url: str) -> None:
    """The candidates are analysed when a selection changed more than a tenth of them (a
    first day): a day with a few changes leaves the statistics of the last bulk write."""
    source = Source(None)
    source.load(database_url, [tenant(f"t-{n:02d}") for n in range(20)])
    source.select(database_url, FIRST, "run-1")
    assert _estimated_versions(database_url) == 20
    # One tenant more and one seat changed: 2 of 21 candidates, each a new version.
    source.load(
        database_url,
        [tenant(f"t-{n:02d}", seats=9 if n == 0 else 10) for n in range(21)],
    )
    assert source.select(database_url, SECOND, "run-2")["rows_written"] == 2
    assert _estimated_versions(database_url) == 20
    # Every seat changed: 21 of 21.
    source.load(database_url, [tenant(f"t-{n:02d}", seats=7) for n in range(21)])
    source.select(database_url, SECOND, "run-3")
    assert _estimated_versions(database_url) > 20
