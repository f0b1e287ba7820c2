"""Runs whose retry the daemon abandoned run again (``abandoned_run_retries``).

The database test makes the daemon abandon a retry the way it does after a code-server
restart: Dagster's own retry step (``consume_new_runs_for_automatic_reexecution``) runs with
the daemon's copy of the code location unreachable. What it leaves (``will_retry=false`` and
no retry) is what the sensor then finds.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.events import EngineEventData, JobFailureData, RunFailureReason
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.remote_origin import (
    GrpcServerCodeLocationOrigin,
    RemoteJobOrigin,
    RemoteRepositoryOrigin,
)
from dagster._core.storage.dagster_run import DagsterRun
from dagster._core.utils import make_new_run_id
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import GrpcServerTarget
from dagster._daemon.auto_run_reexecution.auto_run_reexecution import (
    consume_new_runs_for_automatic_reexecution,
)
from dagster._utils.error import SerializableErrorInfo

from morpheus_pipelines.sensors.run_retries import (
    RETRY_OF_TAG,
    abandoned_run_retries,
    carried_tags,
    may_need_retry,
    unreachable_location,
)
from tests.support.instance import PROJECT_ROOT, project_instance

LOCATION = "morpheus_pipelines"
# No code server listens here: the daemon's copy of the location cannot load.
UNREACHABLE_SOCKET = "/nonexistent/morpheus-code-server.sock"
PARTITION = "2026-12-06"


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ({"dagster/will_retry": "false"}, True),
        ({"dagster/will_retry": "true"}, False),  # the daemon is still on it
        ({}, False),
        ({"dagster/will_retry": "false", "dagster/auto_retry_run_id": "r2"}, False),
        ({"dagster/will_retry": "false", RETRY_OF_TAG: "r0"}, False),  # one retry a loss
    ],
)
def test_only_a_run_the_daemon_will_not_retry_and_did_not_may_need_one(tags, expected) -> None:
    assert may_need_retry(tags) is expected


def test_the_new_run_keeps_the_failed_run_s_own_and_user_set_tags_and_names_it() -> None:
    tags = {
        "dagster/partition": PARTITION,
        "dagster/backfill": "b1",
        "dagster/will_retry": "false",
        ".dagster/grpc_info": "{}",
        "dagster/priority": "5",
        "team": "apac",
    }
    assert carried_tags(tags, "r1") == {"team": "apac", "dagster/priority": "5", RETRY_OF_TAG: "r1"}


def test_a_backfill_run_keeps_its_range_of_days() -> None:
    tags = {
        "dagster/asset_partition_range_start": "2026-12-01",
        "dagster/asset_partition_range_end": "2026-12-06",
        "dagster/backfill": "b1",
    }
    assert carried_tags(tags, "r1") == {
        "dagster/asset_partition_range_start": "2026-12-01",
        "dagster/asset_partition_range_end": "2026-12-06",
        RETRY_OF_TAG: "r1",
    }


def _error(cls_name: str, cause: SerializableErrorInfo | None = None) -> SerializableErrorInfo:
    return SerializableErrorInfo(message="", stack=[], cls_name=cls_name, cause=cause)


def test_only_an_unreachable_code_location_counts() -> None:
    assert unreachable_location(_error("DagsterCodeLocationLoadError"))
    assert unreachable_location(_error("Exception", _error("DagsterUserCodeUnreachableError")))
    context = SerializableErrorInfo(
        "", [], "KeyError", context=_error("DagsterUserCodeUnreachableError")
    )
    assert unreachable_location(context)
    assert not unreachable_location(_error("DagsterInvalidSubsetError"))
    assert not unreachable_location(None)


def _lost_run(
    instance: dg.DagsterInstance,
    tags: dict[str, str],
    reason: RunFailureReason,
    *,
    job: str = "apac_daily_job",
    **fields: object,
) -> DagsterRun:
    """A started run launched from the code location at ``UNREACHABLE_SOCKET``, failed as run
    monitoring fails one whose worker is gone (or as a failing asset fails it)."""
    origin = RemoteJobOrigin(
        repository_origin=RemoteRepositoryOrigin(
            code_location_origin=GrpcServerCodeLocationOrigin(
                host="localhost", socket=UNREACHABLE_SOCKET, location_name=LOCATION
            ),
            repository_name="__repository__",
        ),
        job_name=job,
    )
    run = instance.add_run(
        DagsterRun(
            job_name=job,
            run_id=make_new_run_id(),
            tags={"dagster/partition": PARTITION, **tags},
            status=dg.DagsterRunStatus.STARTED,
            remote_job_origin=origin,
            **fields,
        )
    )
    instance.report_run_failed(run, "lost", JobFailureData(error=None, failure_reason=reason))
    return instance.get_run_by_id(run.run_id)


def _the_daemon_retries(instance: dg.DagsterInstance) -> None:
    """The daemon's retry step over every failed run, its code location unreachable."""
    target = GrpcServerTarget(
        host="localhost", port=None, socket=UNREACHABLE_SOCKET, location_name=LOCATION
    )
    with WorkspaceProcessContext(instance, target) as workspace:
        records = instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
        for _ in consume_new_runs_for_automatic_reexecution(
            workspace, records, logging.getLogger("test")
        ):
            pass


def _abandoned(instance: dg.DagsterInstance, run: DagsterRun) -> bool:
    """The daemon gave the run's retry up: what Dagster alone leaves behind."""
    run = instance.get_run_by_id(run.run_id)
    events = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
    return (
        run.tags.get("dagster/will_retry") == "false"
        and "dagster/auto_retry_run_id" not in run.tags
        and any(e.message == "Failed to retry run" for e in events)
    )


@pytest.mark.database
@pytest.mark.filterwarnings("ignore:Error loading repository location")
def test_a_run_whose_retry_the_daemon_abandoned_runs_again_once(
    database_url: str, instance_database: str, tmp_path: Path
) -> None:
    deployed = yaml.safe_load((PROJECT_ROOT / "deploy" / "dagster.yaml").read_text())
    settings = {"run_retries": deployed["run_retries"]}
    lost_reason = RunFailureReason.RUN_EXCEPTION
    with project_instance(database_url, instance_database, tmp_path, settings) as (instance, _):
        selection = frozenset({dg.AssetKey("tenant_candidates"), dg.AssetKey("routed_tenants")})
        checks = frozenset({dg.AssetCheckKey(dg.AssetKey("routed_tenants"), "buckets_disjoint")})
        config = {"ops": {"tenant_candidates": {"config": {"limit": 100}}}}
        lost = _lost_run(
            instance,
            {"team": "apac"},
            lost_reason,
            run_config=config,
            asset_selection=selection,
            asset_check_selection=checks,
        )
        asset_failed = _lost_run(instance, {}, RunFailureReason.STEP_FAILURE)
        lost_again = _lost_run(instance, {RETRY_OF_TAG: "r0"}, lost_reason)
        other_job = _lost_run(instance, {}, lost_reason, job="hubspot_outbox_job")
        re_executed = _lost_run(instance, {}, lost_reason)
        # Runs of two backfills the daemon still retries: after, one is cancelled, and the
        # other has finished (a job backfill does once none of its runs is running).
        backfills = {
            name: PartitionBackfill(
                backfill_id=name,
                status=BulkActionStatus.REQUESTED,
                from_failure=False,
                tags={},
                backfill_timestamp=time.time(),
                partition_names=[PARTITION],
            )
            for name in ("cancelled", "finished")
        }
        for backfill in backfills.values():
            instance.add_backfill(backfill)
        of_cancelled_backfill = _lost_run(instance, {"dagster/backfill": "cancelled"}, lost_reason)
        of_finished_backfill = _lost_run(instance, {"dagster/backfill": "finished"}, lost_reason)
        # The daemon gave up for another reason than the location (no step left to run).
        not_for_the_location = _lost_run(instance, {}, RunFailureReason.STEP_FAILURE)
        assert lost.tags["dagster/will_retry"] == "true"
        assert asset_failed.tags["dagster/will_retry"] == "false"

        _the_daemon_retries(instance)
        for name, status in (
            ("cancelled", BulkActionStatus.CANCELED),
            ("finished", BulkActionStatus.COMPLETED_FAILED),
        ):
            instance.update_backfill(backfills[name].with_status(status))
        instance.report_engine_event(
            "Failed to retry run",
            not_for_the_location,
            EngineEventData(error=_error("DagsterInvalidSubsetError")),
        )
        # An operator re-executed this one from the UI meanwhile (tagged as Dagster tags it).
        family = {"dagster/parent_run_id": re_executed.run_id}
        family["dagster/root_run_id"] = re_executed.run_id
        instance.add_run(
            DagsterRun(
                job_name="apac_daily_job",
                run_id=make_new_run_id(),
                parent_run_id=re_executed.run_id,
                root_run_id=re_executed.run_id,
                tags=family,
            )
        )

        # Without the sensor this is the end: each lost run is marked never to be retried.
        abandoned = (lost, lost_again, other_job, re_executed)
        abandoned += (of_cancelled_backfill, of_finished_backfill, not_for_the_location)
        assert all(_abandoned(instance, r) for r in abandoned)
        assert not _abandoned(instance, asset_failed)
        assert not instance.get_runs(dg.RunsFilter(tags={"dagster/parent_run_id": lost.run_id}))
        with dg.build_sensor_context(instance=instance) as context:
            requests = {r.run_key: r for r in abandoned_run_retries(context).run_requests}
        assert set(requests) == {
            f"retry-of-{lost.run_id}",
            f"retry-of-{of_finished_backfill.run_id}",
        }
        request = requests[f"retry-of-{lost.run_id}"]
        assert request.run_key == f"retry-of-{lost.run_id}"
        assert (request.job_name, request.partition_key) == ("apac_daily_job", PARTITION)
        assert request.tags == {"team": "apac", RETRY_OF_TAG: lost.run_id}
        assert request.run_config == config
        assert set(request.asset_selection) == selection
        assert set(request.asset_check_keys) == checks

        # Once the retries exist, the sensor asks for nothing more (and says nothing).
        for retried in (lost, of_finished_backfill):
            instance.add_run(
                DagsterRun(
                    job_name="apac_daily_job",
                    run_id=make_new_run_id(),
                    tags={RETRY_OF_TAG: retried.run_id},
                )
            )
        with dg.build_sensor_context(instance=instance) as context:
            assert abandoned_run_retries(context).run_requests == []
