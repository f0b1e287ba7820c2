"""Enrichment that looks only at the tenants whose candidate or answer changed gives every
day exactly the answers that looking at every tenant gives (docs/pipeline.md, "Enrichment
reuse").

Two warehouses live through the same randomised runs — newest days, backfills of older days
and re-runs — with tenants renamed, re-addressed, leaving and coming back, forced
Sales-owned, answers growing old and the service failing some batches; one enriches
incrementally, the other looks at every tenant. After every run, every written day's answers
must be identical, and both must have asked the service the same questions."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import DomainIntelEmulator
from morpheus_pipelines.platform.clients.domain_intelligence import DomainIntelligenceClient
from morpheus_pipelines.tenants.rules.enrichment import reuse_cutoff
from morpheus_pipelines.tenants.steps.partition_enrichment import (
    PartitionEnrichment,
    _carry_forward,
    enrich_partitions,
)
from morpheus_pipelines.tenants.steps.tenant_selection import select_partition
from tests.support.heap import frozen_at_collections
from tests.support.pipeline import SCHEMA, load_source, tenant

DAYS = ["2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"]
TENANT_IDS = [f"t-{n}" for n in range(6)]
NAMES = ["Alpha", "Beta"]
EMAILS = ["ops@alpha.com.sg", "ops@beta.co.jp", "someone@gmail.com", None]
WEBSITES = [None, "https://www.alpha.com.sg", "beta.co.jp"]
# The answers that are a run's output; the run and its duration are not.
COMPARED = (
    "tenant_id, email_domain, email_domain_class, official_website, company_name, industry, "
    "employee_count, country, enrichment_status, enrichment_error_count, enriched_at, "
    "input_fingerprint"
)

tenant_day = st.fixed_dictionaries(
    {
        "selected": st.sampled_from([True, True, True, False]),
        "name": st.sampled_from(NAMES),
        "email": st.sampled_from(EMAILS),
        "website": st.sampled_from(WEBSITES),
    }
)
run = st.fixed_dictionaries(
    {
        "day": st.sampled_from(DAYS),
        "tenants": st.lists(tenant_day, min_size=len(TENANT_IDS), max_size=len(TENANT_IDS)),
        "forced": st.sets(st.sampled_from(TENANT_IDS[:2]), max_size=1),
        # When the run happens, in days after the first day: answers grow old.
        "days_later": st.sampled_from([0, 1, 2, 3]),
        # The service fails the run's first request this many times: once is retried (the
        # answer records one error), twice fails the batch (recorded unavailable).
        "failures": st.sampled_from([0, 0, 1, 2]),
    }
)


class _Warehouse:
    def __init__(self, url: str, client: DomainIntelligenceClient, *, incremental: bool):
        self.url = url
        self.client = client
        self.incremental = incremental
        self.runs = 0

    def live_through(self, spec: dict[str, Any]) -> None:
        rows = [
            tenant(tenant_id, name=day["name"], email=day["email"])
            for tenant_id, day in zip(TENANT_IDS, spec["tenants"], strict=True)
            if day["selected"] or tenant_id in spec["forced"]
        ]
        load_source(self.url, rows)
        factory = partial(get_session, self.url)
        if spec.get("unwritten"):
            # A run that stopped before writing these tenants' answers (the days' versions
            # are laid out alike in both warehouses: each writes only what changed).
            with factory() as session:
                session.connection().exec_driver_sql(
                    "DELETE FROM apac_enriched_tenant_versions WHERE tenant_id = ANY(%(t)s)",
                    {"t": sorted(spec["unwritten"])},
                )
        self.runs += 1
        run_id = f"run-{self.runs}"
        select_partition(
            factory,
            factory,
            schema=SCHEMA,
            partition_key=spec["day"],
            run_id=run_id,
            forced_ids=frozenset(spec["forced"]),
        )
        now = datetime.fromisoformat(f"{DAYS[0]}T12:00:00+00:00") + timedelta(
            days=spec["days_later"], minutes=self.runs
        )
        max_age_days = spec.get("max_age_days", 2)
        if spec.get("candidates_only"):
            return
        if spec.get("stops_before_asking"):
            # The run's first transaction (the carry) commits, then the run dies.
            _carry_forward(
                factory,
                PartitionEnrichment(),
                spec["day"],
                run_id,
                reuse_cutoff(now, max_age_days, configured=True),
                None,
                incremental=self.incremental,
            )
            return
        enrich_partitions(
            factory,
            self.client,
            partition_keys=[spec["day"]],
            run_id=run_id,
            chunk_size=2,
            max_age_days=max_age_days,
            now=now,
            incremental=self.incremental,
        )

    def answers(self) -> dict[str, list[tuple]]:
        with get_session(self.url) as session:
            days = [
                day
                for (day,) in session.connection().exec_driver_sql(
                    "SELECT partition_key FROM apac_enriched_tenant_days ORDER BY 1"
                )
            ]
            return {
                day: [
                    tuple(row)
                    for row in session.connection().exec_driver_sql(
                        f"SELECT {COMPARED} FROM apac_enriched_tenants "
                        "WHERE partition_key = %(p)s ORDER BY tenant_id",
                        {"p": day},
                    )
                ]
                for day in days
            }


@pytest.fixture(scope="module")
def emulator() -> Iterator[DomainIntelEmulator]:
    with DomainIntelEmulator({"tenants": {}}) as emu:
        yield emu


@pytest.fixture
def warehouses(
    database_factory, emulator: DomainIntelEmulator
) -> Callable[[], tuple[_Warehouse, _Warehouse]]:
    clients: list[DomainIntelligenceClient] = []

    def make() -> tuple[_Warehouse, _Warehouse]:
        made = []
        for incremental in (True, False):
            client = DomainIntelligenceClient(
                emulator.base_url,
                retry_count=1,
                requests_per_10s=10_000,
                read_timeout=5.0,
                sleep=lambda seconds: None,
            )
            clients.append(client)
            made.append(_Warehouse(database_factory(), client, incremental=incremental))
        return made[0], made[1]

    yield make
    for client in clients:
        client.close()


def _asked(emulator: DomainIntelEmulator) -> list[list[tuple]]:
    batches = [
        [(i["tenant_id"], i.get("email_domain")) for i in entry.body["inputs"]]
        for entry in emulator.log.entries("enrich")
    ]
    emulator.log.clear()
    return batches


def _live_through_both(
    incremental: _Warehouse, every_tenant: _Warehouse, emulator: DomainIntelEmulator, spec
) -> None:
    for tenant_id, day in zip(TENANT_IDS, spec["tenants"], strict=True):
        emulator.set_tenant(tenant_id, {"official_website": day["website"]})
    asked = []
    for warehouse in (incremental, every_tenant):
        if spec["failures"]:
            emulator.fail(500, endpoint="enrich", times=spec["failures"])
        warehouse.live_through(spec)
        # A run with nothing to ask leaves its failures unspent: they are not the next run's.
        emulator.faults.clear()
        asked.append(_asked(emulator))
    assert asked[0] == asked[1]
    assert incremental.answers() == every_tenant.answers()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(runs=st.lists(run, min_size=2, max_size=6))
def test_incremental_enrichment_answers_every_day_as_looking_at_every_tenant(
    warehouses, emulator: DomainIntelEmulator, runs: list[dict[str, Any]]
) -> None:
    incremental, every_tenant = warehouses()
    emulator.log.clear()
    for spec in runs:
        _live_through_both(incremental, every_tenant, emulator, spec)


def _day(day: str, *, days_later: int = 0, failures: int = 0, **changes: Any) -> dict:
    tenants = [
        {"selected": True, "name": "Alpha", "email": f"ops@t{n}.com.sg", "website": "alpha.com.sg"}
        for n in range(len(TENANT_IDS))
    ]
    for index, values in changes.get("tenant_changes", {}).items():
        tenants[index] = {**tenants[index], **values}
    return {
        "day": day,
        "tenants": tenants,
        "forced": set(changes.get("forced", ())),
        "days_later": days_later,
        "failures": failures,
        "max_age_days": changes.get("max_age_days", 2),
        "stops_before_asking": changes.get("stops_before_asking", False),
        "candidates_only": changes.get("candidates_only", False),
        "unwritten": set(changes.get("unwritten", ())),
    }


# Each history is one reason a tenant must be looked at again; each fails when the
# incremental path stops looking at it.
HISTORIES = {
    "a batch failed the day before": [_day(DAYS[0], failures=2), _day(DAYS[1])],
    "an answer given after a retry records its error": [
        _day(DAYS[0], failures=1),
        _day(DAYS[1]),
    ],
    "answers grew old": [_day(DAYS[0]), _day(DAYS[1], days_later=3)],
    "a tenant renamed": [_day(DAYS[0]), _day(DAYS[1], tenant_changes={0: {"name": "Beta"}})],
    "a tenant left": [_day(DAYS[0]), _day(DAYS[1], tenant_changes={1: {"selected": False}})],
    "a tenant forced Sales-owned": [_day(DAYS[0]), _day(DAYS[1], forced={TENANT_IDS[0]})],
    "a re-run, with a longer maximum age, after its answers were asked again": [
        _day(DAYS[0]),
        _day(DAYS[1], days_later=3),
        _day(DAYS[1], days_later=3, max_age_days=10),
    ],
    "an answer the day before never wrote": [
        _day(DAYS[0]),
        _day(DAYS[1], unwritten={TENANT_IDS[3]}),
    ],
    "a backfill between two days": [
        _day(DAYS[0]),
        _day(DAYS[2], tenant_changes={2: {"email": "ops@other.co.jp"}}),
        _day(DAYS[1], failures=2),
        _day(DAYS[3]),
    ],
}


@pytest.mark.parametrize("history", HISTORIES.values(), ids=HISTORIES.keys())
def test_each_reason_to_look_again(
    warehouses, emulator: DomainIntelEmulator, history: list[dict[str, Any]]
) -> None:
    incremental, every_tenant = warehouses()
    emulator.log.clear()
    for spec in history:
        _live_through_both(incremental, every_tenant, emulator, spec)


def test_a_run_that_stops_before_asking_leaves_no_earlier_answer(
    warehouses, emulator: DomainIntelEmulator
) -> None:
    """A tenant whose email changed is to be asked again; its run commits the carry, then
    dies. The day must not show the answer given for the old email (the next day would take
    it as the day's and never ask), and the next day asks."""
    incremental, _ = warehouses()
    emulator.log.clear()
    changed = {0: {"email": "ops@moved.co.jp"}}
    for spec in (
        _day(DAYS[0]),
        _day(DAYS[1], tenant_changes=changed, stops_before_asking=True),
    ):
        incremental.live_through(spec)
    _asked(emulator)
    # The unfinished day answers nothing, rather than the old email's answer.
    assert incremental.answers()[DAYS[1]] == []
    incremental.live_through(_day(DAYS[2], tenant_changes=changed))
    assert (TENANT_IDS[0], "moved.co.jp") in [pair for batch in _asked(emulator) for pair in batch]


def test_a_day_selected_again_without_enrichment_carries_no_answer(
    warehouses, emulator: DomainIntelEmulator
) -> None:
    """A finished day's candidates are selected again (a renamed tenant) and its enrichment
    does not run again: its answers were given for the old candidates, so the day answers
    none, and the next day asks the renamed tenant rather than carrying the old answer."""
    incremental, _ = warehouses()
    emulator.log.clear()
    renamed = {0: {"name": "Beta"}}
    for spec in (_day(DAYS[0]), _day(DAYS[1])):
        incremental.live_through(spec)
    incremental.live_through(_day(DAYS[1], tenant_changes=renamed, candidates_only=True))
    _asked(emulator)
    assert incremental.answers()[DAYS[1]] == []
    incremental.live_through(_day(DAYS[2], tenant_changes=renamed))
    assert TENANT_IDS[0] in [tenant for batch in _asked(emulator) for tenant, _ in batch]


def test_a_day_is_enriched_with_the_process_heap_frozen_and_given_back(
    warehouses, emulator: DomainIntelEmulator
) -> None:
    """Enrichment's collections walk what enrichment makes, not the whole process
    (platform/heap.py): the heap is frozen at collections while it asks and writes (the
    day's selection before it is not), and given back after."""
    incremental, _ = warehouses()
    with frozen_at_collections() as frozen:
        incremental.live_through(_day(DAYS[0]))
    assert any(frozen)
    assert not all(frozen)
    assert gc.get_freeze_count() == 0


def _statistics_and_versions(warehouse: _Warehouse) -> tuple[float, int]:
    """The rows the planner's statistics count in the answers' versions, and the rows."""
    with get_session(warehouse.url) as session:
        return tuple(
            session.connection()
            .exec_driver_sql(
                "SELECT reltuples, (SELECT count(*) FROM apac_enriched_tenant_versions) "
                "FROM pg_class WHERE relname = 'apac_enriched_tenant_versions'"
            )
            .one()
        )


def test_answers_the_service_gave_are_analysed_once_the_day_is_written(
    warehouses, emulator: DomainIntelEmulator
) -> None:
    """The statistics follow the answers a run's chunks wrote: the first day's (its carry
    found nothing to keep), and a day whose every answer grew old and was asked again; a
    day that changed nothing keeps them."""
    incremental, _ = warehouses()
    incremental.live_through(_day(DAYS[0]))
    counted, versions = _statistics_and_versions(incremental)
    assert counted == versions == len(TENANT_IDS)
    incremental.live_through(_day(DAYS[1]))
    assert _statistics_and_versions(incremental) == (counted, versions)
    incremental.live_through(_day(DAYS[2], days_later=3))
    counted, versions = _statistics_and_versions(incremental)
    assert counted == versions > len(TENANT_IDS)
