"""A partition whose run failed can be re-executed and ends in the state of a clean run."""

from __future__ import annotations

import dagster as dg

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator, HubSpotEmulator
from tests.support.hubspot import TOKEN
from tests.support.jobs import apac_daily_job
from tests.support.pipeline import Pipeline, load_source
from tests.support.reliability import HISTORY, PARTITION, SALES, state, tenants

COUNT = 400


def run_daily(instance: dg.DagsterInstance, **options) -> dg.ExecutionResult:
    """The daily job for PARTITION (its steps run in one process). The partition tag is given
    every time: the UI carries a parent run's tags over to a re-execution, the Python API does
    not."""
    return dg.execute_job(
        dg.reconstructable(apac_daily_job),
        instance,
        tags={"dagster/partition": PARTITION},
        **options,
    )


def _environment(
    monkeypatch, url: str, hubspot: HubSpotEmulator, di: DomainIntelEmulator, home
) -> Pipeline:
    for name, value in {
        "MORPHEUS_DATABASE_URL": url,
        "MORPHEUS_HOME": str(home),
        "HUBSPOT_BASE_URL": hubspot.base_url,
        "HUBSPOT_PRIVATE_APP_TOKEN": TOKEN,
        "DOMAIN_INTELLIGENCE_BASE_URL": di.base_url,
        "APAC_SALES_EMAILS": SALES,
        "HUBSPOT_REQUESTS_PER_10S": "1000",
    }.items():
        monkeypatch.setenv(name, value)
    load_source(url, tenants(COUNT, sales_every=7))
    return Pipeline(
        database_url=url,
        hubspot_url=hubspot.base_url,
        hubspot_token=TOKEN,
        domain_intel_url=di.base_url,
        sales_emails=SALES,
        home=str(home),
    )


def _clean_state(
    database_factory, monkeypatch, hubspot, di, tmp_path, *, ignore: tuple[str, ...] = ()
) -> dict[str, str]:
    clean = _environment(monkeypatch, database_factory(), hubspot, di, tmp_path / "clean")
    with dg.instance_for_test() as instance:
        result = run_daily(instance)
        assert result.success
    return state(clean, ignore=ignore)


def test_reexecute_from_failure_after_the_database_failed_mid_run(
    database_factory, monkeypatch, hubspot_emulator, domain_intel, tmp_path
) -> None:
    expected = _clean_state(database_factory, monkeypatch, hubspot_emulator, domain_intel, tmp_path)
    pipeline = _environment(
        monkeypatch, database_factory(), hubspot_emulator, domain_intel, tmp_path / "failing"
    )
    # The database refuses writes to the decision record mid-run (as if it went away).
    pipeline.execute("""
        CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'connection to server lost (simulated)'; END $$;
        CREATE TRIGGER refuse BEFORE INSERT ON apac_routing_decision_versions
        FOR EACH STATEMENT EXECUTE FUNCTION refuse();
    """)
    with dg.instance_for_test() as instance:
        failed = run_daily(instance, raise_on_error=False)
        assert not failed.success
        failed_steps = {e.step_key for e in failed.all_events if e.is_step_failure}
        assert failed_steps == {"routed_tenants"}
        # nothing half-written: the failing batch rolled back as a whole
        assert pipeline.query("SELECT count(*) FROM apac_routing_decisions") == [(0,)]
        pipeline.execute("DROP TRIGGER refuse ON apac_routing_decision_versions")
        rerun = run_daily(
            instance,
            reexecution_options=dg.ReexecutionOptions.from_failure(failed.run_id, instance),
        )
        assert rerun.success
        rerun_steps = {e.step_key for e in rerun.all_events if e.is_step_success}
        assert "routed_tenants" in rerun_steps and "tenant_candidates" not in rerun_steps
    assert state(pipeline) == expected


def test_rerun_after_domain_intelligence_errors_reaches_the_clean_state(
    database_factory, monkeypatch, hubspot_emulator, domain_intel, tmp_path
) -> None:
    expected = _clean_state(
        database_factory, monkeypatch, hubspot_emulator, domain_intel, tmp_path, ignore=HISTORY
    )
    pipeline = _environment(
        monkeypatch, database_factory(), hubspot_emulator, domain_intel, tmp_path / "di_down"
    )
    fault = domain_intel.fail(503, times=None)
    with dg.instance_for_test() as instance:
        degraded = run_daily(instance)
        assert degraded.success  # routing never waits on enrichment
        assert pipeline.query("SELECT DISTINCT enrichment_status FROM apac_enriched_tenants") == [
            ("unavailable",)
        ]
        # official-website matches were missed
        assert state(pipeline, ignore=HISTORY) != expected
        domain_intel.faults.remove(fault)
        again = run_daily(instance)
        assert again.success
    assert state(pipeline, ignore=HISTORY) == expected
