"""A routing process killed with SIGKILL between batches: tables stay disjoint, nothing is
lost, and a re-run converges to the state of a clean run."""

from __future__ import annotations

import signal
from pathlib import Path

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.hubspot import TOKEN
from tests.support.pipeline import Pipeline, load_source
from tests.support.reliability import PARTITION, SALES, tenants

# Columns that legitimately differ between two runs (ids and clocks), not routing state.
VOLATILE = ("run_id", "updated_at", "decided_at", "hubspot_sync_id", "hubspot_snapshot_synced_at")
TABLES = ("apac_active_tenants", "apac_sales_owned_tenants", "apac_routing_decisions")
COUNT = 6000


def _prepare(url: str, emulator: HubSpotEmulator, home: Path) -> Pipeline:
    """Route once without Sales emails, then switch them on so the next run moves tenants."""
    pipeline = Pipeline(
        database_url=url,
        hubspot_url=emulator.base_url,
        hubspot_token=TOKEN,
        home=str(home),
        batch_size=50,
    )
    load_source(url, tenants(COUNT, sales_every=4))
    assert pipeline.snapshot().success
    assert pipeline.route(PARTITION).success
    pipeline.sales_emails = SALES
    return pipeline


def _state(pipeline: Pipeline) -> dict[str, str]:
    return {t: pipeline.table_hash(t, exclude=VOLATILE) for t in TABLES}


def test_sigkill_between_routing_batches(database_factory, hubspot_emulator, tmp_path) -> None:
    clean = _prepare(database_factory(), hubspot_emulator, tmp_path / "clean")
    assert clean.materialize(["routed_tenants"], PARTITION).success
    expected = _state(clean)
    expected_sales = clean.query("SELECT count(*) FROM apac_sales_owned_tenants")[0][0]
    assert expected_sales > COUNT // 5

    pipeline = _prepare(database_factory(), hubspot_emulator, tmp_path / "killed")
    child = pipeline.spawn(["routed_tenants"], PARTITION)
    moved = 0
    try:
        # Wait until some batches have committed, then kill without warning.
        while child.poll() is None:
            moved = pipeline.query("SELECT count(*) FROM apac_sales_owned_tenants")[0][0]
            if moved >= 50:
                break
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    assert 0 < moved < expected_sales

    overlap = pipeline.query(
        "SELECT count(*) FROM apac_active_tenants a JOIN apac_sales_owned_tenants s "
        "USING (tenant_id)"
    )[0][0]
    assert overlap == 0
    in_buckets = pipeline.query(
        "SELECT (SELECT count(*) FROM apac_active_tenants) + "
        "(SELECT count(*) FROM apac_sales_owned_tenants)"
    )[0][0]
    assert in_buckets == COUNT  # every tenant is in exactly one bucket, none lost

    assert pipeline.materialize(["routed_tenants"], PARTITION).success
    assert _state(pipeline) == expected
