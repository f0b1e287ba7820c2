"""Freshness without runs: the daemon evaluates the freshness policies of the snapshot and
the daily assets (no schedule launches runs to watch them); the ``snapshot_freshness`` check
still says whether the snapshot's data is fresh when it is evaluated."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.definitions.freshness import CronFreshnessPolicy, TimeWindowFreshnessPolicy

from morpheus_pipelines.assets.hubspot.snapshot import ASSET_KEY, FRESHNESS_CHECK
from morpheus_pipelines.assets.tenants.schedules import DAILY_ASSETS
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.definitions import defs
from morpheus_pipelines.platform.partitions import daily_partitions, weekly_partitions
from morpheus_pipelines.platform.settings import DEFAULTS
from morpheus_pipelines.tenants.store import HubSpotTargetSyncStateRepository
from tests.support.instance import project_instance

CHECK_KEY = dg.AssetCheckKey(ASSET_KEY, FRESHNESS_CHECK)
LIST_ID = DEFAULTS["HUBSPOT_TARGET_LIST_ID"]
states = HubSpotTargetSyncStateRepository()


def _policies() -> dict[str, dg.FreshnessPolicy]:
    graph = defs.resolve_asset_graph()
    return {
        key.to_user_string(): graph.get(key).freshness_policy
        for key in graph.get_all_asset_keys()
        if graph.get(key).freshness_policy is not None
    }


def test_the_snapshot_is_fresh_for_26_hours_and_warns_after_25() -> None:
    policy = _policies()["hubspot_target_accounts"]
    assert isinstance(policy, TimeWindowFreshnessPolicy)
    assert policy.fail_window.to_timedelta() == timedelta(hours=26)
    assert policy.warn_window is not None
    assert policy.warn_window.to_timedelta() == timedelta(hours=25)


def test_every_daily_asset_must_have_materialised_between_midnight_and_0830_cst() -> None:
    policies = _policies()
    graph = defs.resolve_asset_graph()
    daily = {
        key.to_user_string()
        for key in graph.get_all_asset_keys()
        if graph.get(key).partitions_def == daily_partitions
    }
    # The daily job's assets but the (unpartitioned) snapshot, and the Daily Summary's
    # delivery to the managers, which is due by the same 08:30.
    assert daily == set(DAILY_ASSETS) - {"hubspot_target_accounts"} | {"daily_summary_delivery"}
    assert set(policies) == daily | {"hubspot_target_accounts"} | WEEKLY
    for name in daily:
        policy = policies[name]
        assert isinstance(policy, CronFreshnessPolicy), name
        assert (policy.deadline_cron, policy.timezone) == ("30 8 * * *", "Asia/Shanghai")
        assert policy.lower_bound_delta == timedelta(hours=8, minutes=30)


WEEKLY = {"weekly_metrics", "weekly_metrics_delivery"}


def test_every_weekly_asset_must_have_materialised_by_monday_0930_cst() -> None:
    policies = _policies()
    graph = defs.resolve_asset_graph()
    weekly = {
        key.to_user_string()
        for key in graph.get_all_asset_keys()
        if graph.get(key).partitions_def == weekly_partitions
    }
    assert weekly == WEEKLY
    for name in weekly:
        policy = policies[name]
        assert isinstance(policy, CronFreshnessPolicy), name
        assert (policy.deadline_cron, policy.timezone) == ("30 9 * * 1", "Asia/Shanghai")
        # From the week's end (Monday 00:00) to the deadline: the run at 08:30 counts.
        assert policy.lower_bound_delta == timedelta(hours=9, minutes=30)


def test_no_schedule_launches_runs_to_watch_the_snapshot() -> None:
    """The 15-minute schedule (96 runs a day) is gone: no job evaluates a snapshot check
    without refreshing the snapshot."""
    repository = defs.get_repository_def()
    assert "snapshot_freshness_schedule" not in {s.name for s in repository.schedule_defs}
    for job in repository.get_all_jobs():
        checks = job.asset_layer.asset_graph.asset_check_keys
        if any(check.asset_key == ASSET_KEY for check in checks):
            assert ASSET_KEY in job.asset_layer.executable_asset_keys, job.name


# --- the snapshot_freshness check, evaluated alone ------------------------------------------


@pytest.fixture
def location(
    database_url: str, instance_database: str, tmp_path: Path
) -> Iterator[tuple[dg.DagsterInstance, dg.Definitions]]:
    with project_instance(database_url, instance_database, tmp_path) as (instance, loaded):
        alone = dg.define_asset_job("snapshot_freshness_alone", dg.AssetSelection.checks(CHECK_KEY))
        yield instance, dg.Definitions.merge(loaded, dg.Definitions(jobs=[alone]))


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
def test_the_check_judges_the_snapshot_s_age(
    case: str,
    passed: bool,
    severity: dg.AssetCheckSeverity,
    database_url: str,
    location: tuple[dg.DagsterInstance, dg.Definitions],
) -> None:
    instance, definitions = location
    _seed(database_url, case)
    result = definitions.resolve_job_def("snapshot_freshness_alone").execute_in_process(
        instance=instance
    )

    assert result.success  # a failed check is a result, not a failed run
    assert result.get_asset_materialization_events() == []
    [evaluation] = result.get_asset_check_evaluations()
    assert (evaluation.passed, evaluation.severity) == (passed, severity)
    # Typed metadata: the age is a number and the last success a timestamp, or absent.
    metadata = evaluation.metadata
    if case in ("old", "fresh"):
        assert isinstance(metadata["snapshot_age_hours"], dg.FloatMetadataValue)
        assert isinstance(metadata["last_successful_sync_at"], dg.TimestampMetadataValue)
    else:
        assert "snapshot_age_hours" not in metadata
        assert "last_successful_sync_at" not in metadata
