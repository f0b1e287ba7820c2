"""``snapshot_freshness`` runs on its own 15-minute schedule, so the check in the UI turns red
when the daily job stops instead of staying green from its last run with the asset."""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

from morpheus_pipelines.assets.hubspot.snapshot import ASSET_KEY, FRESHNESS_CHECK
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import DAGSTER_URL_VARIABLE
from morpheus_pipelines.definitions import defs
from morpheus_pipelines.platform.settings import DEFAULTS
from morpheus_pipelines.tenants.store import HubSpotTargetSyncStateRepository

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CHECK_KEY = dg.AssetCheckKey(ASSET_KEY, FRESHNESS_CHECK)
LIST_ID = DEFAULTS["HUBSPOT_TARGET_LIST_ID"]
states = HubSpotTargetSyncStateRepository()


def _other_schedules() -> list:
    return [s for s in defs.schedules if s.name != "snapshot_freshness_schedule"]


def test_schedule_runs_the_check_alone_every_15_minutes() -> None:
    schedule = defs.resolve_schedule_def("snapshot_freshness_schedule")
    assert schedule.cron_schedule == "*/15 * * * *"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert schedule.job_name == "snapshot_freshness_job"
    # The same timezone as the pipeline schedules (built from the CST daily partitions).
    assert schedule.execution_timezone == "Asia/Shanghai"
    repository = defs.get_repository_def()
    for other in _other_schedules():
        assert repository.get_schedule_def(other.name).execution_timezone == "Asia/Shanghai"

    # The unresolved job carries the selection: exactly the check, no asset.
    unresolved = next(j for j in defs.jobs if j.name == "snapshot_freshness_job")
    graph = defs.resolve_asset_graph()
    assert unresolved.selection.resolve(graph) == set()
    assert unresolved.selection.resolve_checks(graph) == {CHECK_KEY}
    job = defs.resolve_job_def("snapshot_freshness_job")
    assert job.asset_layer.selected_asset_keys == set()
    assert [node.name for node in job.nodes] == ["hubspot_target_accounts_snapshot_freshness"]


@pytest.fixture
def project_instance(
    database_url: str, instance_database: str, tmp_path: Path
) -> Iterator[tuple[dg.DagsterInstance, dg.Definitions]]:
    """The project's Dagster instance (``dagster.yaml``: Postgres storage) on an empty
    database, and the definitions as a code location loaded in this environment builds them
    (resources read the environment when the module loads), reading the test warehouse."""
    import morpheus_pipelines.definitions as definitions

    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copyfile(PROJECT_ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    with pytest.MonkeyPatch.context() as env:
        for name in list(os.environ):
            if name.startswith(("HUBSPOT_", "MORPHEUS_", "DAGSTER_")):
                env.delenv(name)
        env.setenv("DAGSTER_HOME", str(dagster_home))
        env.setenv("MORPHEUS_HOME", str(tmp_path / "morpheus_home"))
        env.setenv("MORPHEUS_DATABASE_URL", database_url)
        env.setenv(DAGSTER_URL_VARIABLE, instance_database)
        with dg.DagsterInstance.get() as instance:
            yield instance, importlib.reload(definitions).defs
    # The environment is back: leave the module as the rest of the session expects it.
    importlib.reload(definitions)


def _seed(url: str, case: str) -> None:
    now = datetime.now(UTC)
    with get_session(url) as session:
        if case in ("old", "fresh"):
            age = timedelta(hours=40 if case == "old" else 1)
            states.record_success(
                session,
                list_id=LIST_ID,
                sync_id="s-1",
                synced_at=now - age,
                list_total=3,
                snapshot_hash="h",
            )
        if case == "never_succeeded":
            states.record_failure(
                session, list_id=LIST_ID, attempted_at=now, error="HTTP 401 INVALID_AUTHENTICATION"
            )


@pytest.mark.parametrize(
    ("case", "passed", "severity"),
    [
        ("old", False, dg.AssetCheckSeverity.WARN),
        ("never_succeeded", False, dg.AssetCheckSeverity.ERROR),
        ("no_sync_state", False, dg.AssetCheckSeverity.ERROR),
        ("fresh", True, dg.AssetCheckSeverity.WARN),
    ],
)
def test_the_job_records_the_check_evaluation(
    case: str,
    passed: bool,
    severity: dg.AssetCheckSeverity,
    database_url: str,
    project_instance: tuple[dg.DagsterInstance, dg.Definitions],
) -> None:
    instance, location = project_instance
    _seed(database_url, case)
    result = location.resolve_job_def("snapshot_freshness_job").execute_in_process(
        instance=instance
    )

    assert result.success  # a failed check is a result, not a failed run
    assert result.get_asset_materialization_events() == []
    [evaluation] = result.get_asset_check_evaluations()
    assert evaluation.asset_check_key == CHECK_KEY
    assert (evaluation.passed, evaluation.severity) == (passed, severity)

    # What the UI reads: the latest execution of the check in the instance's event log.
    record = instance.event_log_storage.get_latest_asset_check_execution_by_key([CHECK_KEY])[
        CHECK_KEY
    ]
    assert record.run_id == result.run_id
    stored = record.event.dagster_event.event_specific_data
    assert (stored.passed, stored.severity) == (passed, severity)
