"""Every fault the emulators can inject, at pipeline level.

Yesterday's partition ran cleanly; since then the HubSpot list changed (one company joined,
one left). Today's daily assets run while HubSpot or Domain Intelligence fails with one fault,
then once more after it recovered. After the faulted run: the run did not fail, the previous
snapshot is intact (hash-compared), the buckets are disjoint and hold every source tenant.
After the re-run: the state equals a clean run's. A fault that clears within the retry budget
must not even need the re-run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from morpheus_pipelines.assets.hubspot.snapshot import REFRESH_CHECK
from morpheus_pipelines.assets.tenants.schedules import DAILY_ASSETS
from morpheus_pipelines.devtools.emulators import DomainIntelEmulator, FaultKind, HubSpotEmulator
from tests.support.databases import DatabaseFactory
from tests.support.hubspot import LIST_ID, TOKEN
from tests.support.pipeline import Pipeline, load_source
from tests.support.reliability import (
    BUCKETS,
    HISTORY,
    PARTITION,
    SALES,
    TABLES,
    VOLATILE,
    domain_intel_data,
    hubspot_data,
    state,
    tenants,
)

YESTERDAY = "2026-11-28"
COUNT = 400
SNAPSHOT = "apac_hubspot_target_accounts"
# The Daily Summary is left out (it only reads the active bucket, compared here, and writes
# report files); the candidates are compared as well.
ASSETS = [key for key in DAILY_ASSETS if key != "daily_summary"]
COMPARED = (*(t for t in TABLES if t != "apac_daily_summary_tenants"), "apac_tenant_candidates")
# Tenants that Domain Intelligence knows by an official website matching a target company.
WEBSITE_MATCHED = {f"t{i:05d}" for i in range(5, COUNT, 10)}

Inject = Callable[[HubSpotEmulator | DomainIntelEmulator, int | None], object]


@dataclass(frozen=True)
class Case:
    kind: FaultKind
    inject: Inject  # (emulator, times) -> registered fault
    retryable: bool = True  # whether one occurrence is absorbed by the client's retries


HUBSPOT_CASES = {
    "500_on_every_endpoint": Case(FaultKind.STATUS, lambda e, n: e.fail(500, times=n)),
    "503_mid_pagination": Case(
        FaultKind.STATUS, lambda e, n: e.fail(503, endpoint="memberships", page=1, times=n)
    ),
    "reset_on_batch_read": Case(
        FaultKind.RESET, lambda e, n: e.fail("reset", endpoint="batch_read", times=n)
    ),
    "truncated_json_list": Case(
        FaultKind.TRUNCATED_JSON, lambda e, n: e.fail("truncated_json", endpoint="list", times=n)
    ),
    "short_body_memberships": Case(
        FaultKind.SHORT_BODY,
        lambda e, n: e.fail("short_body", endpoint="memberships", page=1, times=n),
    ),
    "slow_batch_read": Case(
        FaultKind.SLOW, lambda e, n: e.slow(1.5, endpoint="batch_read", times=n)
    ),
    "rate_limit_ten_secondly": Case(
        FaultKind.RATE_LIMIT, lambda e, n: e.rate_limit("TEN_SECONDLY_ROLLING", times=n)
    ),
    # A spent daily quota is not retried: waiting would only burn the run.
    "rate_limit_daily": Case(
        FaultKind.RATE_LIMIT, lambda e, n: e.rate_limit("DAILY", times=n), retryable=False
    ),
    # Data-level faults fail validation: a fetch that succeeded is not retried.
    "duplicate_members": Case(
        FaultKind.DUPLICATE_MEMBERS, lambda e, n: e.duplicate_members(1, times=n), retryable=False
    ),
    "list_size_mismatch": Case(
        FaultKind.LIST_SIZE, lambda e, n: e.misreport_list_size(times=n), retryable=False
    ),
    "list_still_processing": Case(
        FaultKind.PROCESSING_STATUS,
        lambda e, n: e.report_processing_status(times=n),
        retryable=False,
    ),
    "missing_companies": Case(
        FaultKind.MISSING_COMPANIES, lambda e, n: e.drop_companies(times=n), retryable=False
    ),
}

DOMAIN_INTEL_CASES = {
    "503": Case(FaultKind.STATUS, lambda e, n: e.fail(503, times=n)),
    "429_retry_after": Case(FaultKind.STATUS, lambda e, n: e.fail(429, retry_after=0, times=n)),
    "reset": Case(FaultKind.RESET, lambda e, n: e.fail("reset", times=n)),
    "truncated_json": Case(
        FaultKind.TRUNCATED_JSON, lambda e, n: e.fail("truncated_json", times=n)
    ),
    "short_body": Case(FaultKind.SHORT_BODY, lambda e, n: e.fail("short_body", times=n)),
    "slow": Case(FaultKind.SLOW, lambda e, n: e.slow(1.5, endpoint="enrich", times=n)),
}


@dataclass
class World:
    """Emulators, yesterday's database and today's clean run, shared by the module."""

    factory: DatabaseFactory
    hubspot: HubSpotEmulator
    domain_intel: DomainIntelEmulator
    yesterday_url: str = ""
    yesterday_snapshot: str = ""
    clean: Pipeline | None = None
    expected_snapshot: str = ""

    def pipeline(self, home: Path, url: str | None = None) -> Pipeline:
        """Today's pipeline on ``url``, by default a copy of yesterday's database."""
        return Pipeline(
            database_url=url or self.factory(copy_of=self.yesterday_url),
            hubspot_url=self.hubspot.base_url,
            hubspot_token=TOKEN,
            domain_intel_url=self.domain_intel.base_url,
            sales_emails=SALES,
            home=str(home),
            # short timeouts so a slow answer times out in a test-friendly second
            hubspot_options={"request_timeout": 1.0},
            # max_age_days=0: every tenant is asked every run, so a fault meets real requests
            # (yesterday's answers would otherwise be reused).
            domain_intel_options={"read_timeout": 1.0, "retry_count": 1, "max_age_days": 0},
        )

    def expected(self, **options) -> dict[str, str]:
        """The clean run's state (see ``state`` for the options)."""
        assert self.clean is not None
        return state(self.clean, tables=COMPARED, **options)


def _snapshot(pipeline: Pipeline, exclude: tuple[str, ...] = ()) -> str:
    return pipeline.table_hash(SNAPSHOT, exclude=exclude)


@pytest.fixture(scope="module")
def world(pg_server, template_database, tmp_path_factory) -> Iterator[World]:
    factory = DatabaseFactory(pg_server, template_database)
    home = tmp_path_factory.mktemp("fault_matrix")
    data = hubspot_data()
    # 300 more members (matching no tenant) so memberships span two pages of 250.
    for i in range(300):
        data["companies"][str(8000 + i)] = {"properties": {"name": f"Filler {i}"}}
        data["lists"][LIST_ID]["members"].append(str(8000 + i))
    try:
        with (
            HubSpotEmulator(data) as hubspot,
            DomainIntelEmulator(domain_intel_data()) as domain_intel,
        ):
            world = World(factory, hubspot, domain_intel, yesterday_url=factory())
            yesterday = world.pipeline(home / "yesterday", world.yesterday_url)
            load_source(world.yesterday_url, tenants(COUNT, sales_every=7))
            assert yesterday.materialize(ASSETS, YESTERDAY).success
            world.yesterday_snapshot = _snapshot(yesterday)

            # Overnight a sales manager adds "Corp 1" (tenant t00001's email domain) to the
            # target list and removes "Target 0" (t00000's portal and domain).
            hubspot.set_company("7999", {"name": "Corp 1", "domain": "corp1.co.jp"})
            hubspot.add_list_members(LIST_ID, ["7999"])
            hubspot.remove_list_members(LIST_ID, ["7000"])

            world.clean = world.pipeline(home / "clean")
            assert world.clean.materialize(ASSETS, PARTITION).success
            world.expected_snapshot = _snapshot(world.clean, exclude=VOLATILE)
            assert world.expected_snapshot != _snapshot(yesterday, exclude=VOLATILE)
            # t00001 is Sales-owned, but a HubSpot target account is routed to the active bucket
            assert world.clean.bucket_of("t00001") == "active"
            yield world
    finally:
        factory.drop_all()


@pytest.fixture
def faults(world: World) -> Iterator[None]:
    """Withdraw every injected fault after the test, passed or not."""
    yield
    world.hubspot.faults.clear()
    world.domain_intel.faults.clear()


def _assert_no_tenant_lost(pipeline: Pipeline) -> None:
    overlap = pipeline.query(
        "SELECT count(*) FROM apac_active_tenants JOIN apac_sales_owned_tenants USING (tenant_id)"
    )
    assert overlap == [(0,)]
    in_buckets = pipeline.query(
        "SELECT (SELECT count(*) FROM apac_active_tenants) + "
        "(SELECT count(*) FROM apac_sales_owned_tenants)"
    )
    assert in_buckets == [(COUNT,)]


def _refresh_check_passed(result) -> bool:
    (evaluation,) = [
        e for e in result.get_asset_check_evaluations() if e.check_name == REFRESH_CHECK
    ]
    return evaluation.passed


def _bucket_rows(pipeline: Pipeline) -> dict[str, str]:
    """Each tenant's bucket row as text, keyed by tenant id; ids, clocks and the partition of
    the last change (every tenant's enrichment changed twice) left out."""
    rows = {}
    for table in BUCKETS:
        kept = [c for c in pipeline.columns(table) if c not in (*VOLATILE, "partition_key")]
        columns = ", ".join(kept)
        rows.update(pipeline.query(f"SELECT tenant_id, row({columns})::text FROM {table}"))
    return rows


def _run_with_fault(world: World, emulator, case: Case, home: Path, times: int | None = None):
    """Today's assets on a copy of yesterday's database while ``emulator`` injects ``case``
    (``times`` occurrences, None for every request); the pipeline, the fault, the result."""
    pipeline = world.pipeline(home)
    fault = case.inject(emulator, times)
    return pipeline, fault, pipeline.materialize(ASSETS, PARTITION, raise_on_error=False)


# Faults of HubSpot writes: the daily assets write nothing to HubSpot, so these are covered
# where the writes are, in tests/hubspot/test_client_writes.py.
HUBSPOT_WRITE_FAULTS = {FaultKind.PARTIAL_FAILURE, FaultKind.ANSWER_LOST}
# A refused token is configuration, not an outage: it fails the snapshot asset, naming
# HUBSPOT_PRIVATE_APP_TOKEN (tests/hubspot/test_snapshot_configuration_errors.py).
HUBSPOT_CONFIGURATION_FAULTS = {FaultKind.UNAUTHORIZED}


def test_every_emulator_fault_is_covered() -> None:
    covered = (
        {c.kind for c in HUBSPOT_CASES.values()}
        | HUBSPOT_WRITE_FAULTS
        | HUBSPOT_CONFIGURATION_FAULTS
    )
    assert covered == HubSpotEmulator.supported_faults
    assert {c.kind for c in DOMAIN_INTEL_CASES.values()} == DomainIntelEmulator.supported_faults


@pytest.mark.usefixtures("faults")
@pytest.mark.parametrize("name", HUBSPOT_CASES)
def test_hubspot_fault_keeps_previous_snapshot_and_rerun_converges(
    world: World, name: str, tmp_path
) -> None:
    pipeline, fault, result = _run_with_fault(world, world.hubspot, HUBSPOT_CASES[name], tmp_path)

    assert result.success, "a failed snapshot refresh must not fail the daily run"
    assert fault.fired >= 1
    assert not _refresh_check_passed(result)
    assert _snapshot(pipeline) == world.yesterday_snapshot  # byte for byte, ids included
    ((status, error),) = pipeline.query(
        "SELECT last_attempt_status, last_error FROM apac_hubspot_target_sync_state"
    )
    assert status == "failed" and error and TOKEN not in error
    _assert_no_tenant_lost(pipeline)
    # routed on yesterday's list: Corp 1 is not a target yet, so Sales keeps its tenant
    assert pipeline.bucket_of("t00001") == "sales_owned"
    assert state(pipeline, tables=COMPARED) != world.expected()

    world.hubspot.faults.clear()
    assert pipeline.materialize(ASSETS, PARTITION).success
    assert pipeline.query("SELECT last_attempt_status FROM apac_hubspot_target_sync_state") == [
        ("success",)
    ]
    assert _snapshot(pipeline, exclude=VOLATILE) == world.expected_snapshot
    assert state(pipeline, tables=COMPARED) == world.expected()


@pytest.mark.usefixtures("faults")
@pytest.mark.parametrize("name", [n for n, c in HUBSPOT_CASES.items() if c.retryable])
def test_transient_hubspot_fault_is_absorbed_by_retries(world: World, name: str, tmp_path) -> None:
    pipeline, fault, result = _run_with_fault(
        world, world.hubspot, HUBSPOT_CASES[name], tmp_path, times=1
    )

    assert result.success

    assert fault.fired == 1
    assert _refresh_check_passed(result)
    assert _snapshot(pipeline, exclude=VOLATILE) == world.expected_snapshot
    assert state(pipeline, tables=COMPARED) == world.expected()


@pytest.mark.usefixtures("faults")
@pytest.mark.parametrize("name", DOMAIN_INTEL_CASES)
def test_domain_intelligence_fault_never_blocks_routing_and_rerun_converges(
    world: World, name: str, tmp_path
) -> None:
    pipeline, fault, result = _run_with_fault(
        world, world.domain_intel, DOMAIN_INTEL_CASES[name], tmp_path
    )

    assert result.success, "routing never waits on enrichment"
    assert fault.fired >= 1
    statuses = pipeline.query(
        "SELECT DISTINCT enrichment_status FROM apac_enriched_tenants WHERE partition_key = :p",
        p=PARTITION,
    )
    assert statuses == [("unavailable",)]
    assert _snapshot(pipeline, exclude=VOLATILE) == world.expected_snapshot
    _assert_no_tenant_lost(pipeline)
    path = {"ignore": HISTORY, "last_change": False}
    # official-website matches were missed, so priorities differ from a clean run
    assert state(pipeline, tables=COMPARED, **path) != world.expected(**path)

    world.domain_intel.faults.clear()
    assert pipeline.materialize(ASSETS, PARTITION).success
    assert state(pipeline, tables=COMPARED, **path) == world.expected(**path)
    # Only the history of the tenants the outage detoured differs: those matched by website.
    assert world.clean is not None
    ours, clean = _bucket_rows(pipeline), _bucket_rows(world.clean)
    detoured = {tenant for tenant, row in ours.items() if clean[tenant] != row}
    assert detoured and detoured <= WEBSITE_MATCHED


@pytest.mark.usefixtures("faults")
@pytest.mark.parametrize("name", [n for n, c in DOMAIN_INTEL_CASES.items() if c.retryable])
def test_transient_domain_intelligence_fault_is_absorbed_by_retries(
    world: World, name: str, tmp_path
) -> None:
    pipeline, fault, result = _run_with_fault(
        world, world.domain_intel, DOMAIN_INTEL_CASES[name], tmp_path, times=1
    )

    assert result.success

    assert fault.fired == 1
    # The retried batch's 100 tenants record the failed attempt (and, in their bucket rows,
    # today as the partition of their last change); nothing else differs from a clean run.
    retried = pipeline.query(
        "SELECT count(*) FROM apac_enriched_tenants "
        "WHERE partition_key = :p AND enrichment_error_count = 1",
        p=PARTITION,
    )
    assert retried == [(100,)]
    path = {"ignore": ("enrichment_error_count",), "last_change": False}
    assert state(pipeline, tables=COMPARED, **path) == world.expected(**path)
