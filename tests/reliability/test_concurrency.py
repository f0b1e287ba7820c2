"""Concurrent runs: two runs of one partition, and a snapshot refresh during routing.

What makes this safe (docs/reliability.md): every routing batch takes the transaction-level
advisory lock ``ROUTING_LOCK_KEY`` before it touches the bucket tables, so batches of
concurrent runs serialise instead of interleaving their upserts and deletes (no deadlock, and
each commit leaves the tables disjoint); the primary keys make every write an upsert; and the
snapshot refresh is one transaction, so a routing run reads either the old or the new
snapshot, never a mix.
"""

from __future__ import annotations

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.hubspot import TOKEN
from tests.support.pipeline import Pipeline, load_source
from tests.support.reliability import PARTITION, SALES, tenants

VOLATILE = ("run_id", "updated_at", "decided_at", "hubspot_sync_id", "hubspot_snapshot_synced_at")
TABLES = ("apac_active_tenants", "apac_sales_owned_tenants", "apac_routing_decisions")
COUNT = 3000


def _pipeline(url: str, emulator: HubSpotEmulator, home) -> Pipeline:
    pipeline = Pipeline(
        database_url=url,
        hubspot_url=emulator.base_url,
        hubspot_token=TOKEN,
        sales_emails=SALES,
        home=str(home),
        batch_size=200,
    )
    load_source(url, tenants(COUNT, sales_every=5))
    assert pipeline.snapshot().success
    assert pipeline.materialize(["tenant_candidates", "enriched_tenants"], PARTITION).success
    return pipeline


def _state(pipeline: Pipeline, exclude: tuple[str, ...] = ()) -> dict[str, str]:
    return {t: pipeline.table_hash(t, exclude=(*VOLATILE, *exclude)) for t in TABLES}


def _wait(*children) -> list[int]:
    codes = []
    for child in children:
        _, err = child.communicate(timeout=300)
        codes.append(child.returncode)
        assert child.returncode == 0, err.decode()[-3000:]
    return codes


def test_two_runs_of_the_same_partition_at_once(
    database_factory, hubspot_emulator, tmp_path
) -> None:
    clean = _pipeline(database_factory(), hubspot_emulator, tmp_path / "clean")
    assert clean.materialize(["routed_tenants"], PARTITION).success
    expected = _state(clean)

    pipeline = _pipeline(database_factory(), hubspot_emulator, tmp_path / "twice")
    first = pipeline.spawn(["routed_tenants"], PARTITION)
    second = pipeline.spawn(["routed_tenants"], PARTITION)
    assert _wait(first, second) == [0, 0]
    assert _state(pipeline) == expected
    assert pipeline.query(
        "SELECT count(*) FROM apac_active_tenants JOIN apac_sales_owned_tenants USING (tenant_id)"
    ) == [(0,)]


def test_snapshot_refresh_concurrent_with_routing(
    database_factory, hubspot_emulator, tmp_path
) -> None:
    pipeline = _pipeline(database_factory(), hubspot_emulator, tmp_path / "refresh")
    hubspot_emulator.remove_list_members("19544", [str(7000 + i) for i in range(0, 200, 2)])
    refresh = pipeline.spawn(["hubspot_target_accounts"])
    routing = pipeline.spawn(["routed_tenants"], PARTITION)
    _wait(refresh, routing)
    # The routing run used exactly one snapshot for all of its batches: every bucket row it
    # wrote (a first run writes them all) carries the one its day records.
    written = pipeline.query(
        "SELECT DISTINCT hubspot_sync_id FROM (SELECT hubspot_sync_id FROM apac_active_tenants "
        "WHERE partition_key = :p UNION ALL SELECT hubspot_sync_id FROM apac_sales_owned_tenants "
        "WHERE partition_key = :p) AS b",
        p=PARTITION,
    )
    assert written == pipeline.query(
        "SELECT hubspot_sync_id FROM apac_routing_decision_days WHERE partition_key = :p",
        p=PARTITION,
    )
    assert len(written) == 1
    # Re-running routing on the new snapshot gives what a clean run on it gives. When the
    # concurrent run used the old snapshot, the re-run really moved some tenants, and the move
    # history says so; every bucket, rule and piece of evidence is the clean run's.
    assert pipeline.materialize(["routed_tenants"], PARTITION).success
    clean = _pipeline(database_factory(), hubspot_emulator, tmp_path / "clean")
    assert clean.materialize(["routed_tenants"], PARTITION).success
    history = ("moved", "moved_from", "entered_from", "bucket_entered_partition")
    assert _state(pipeline, exclude=history) == _state(clean, exclude=history)
