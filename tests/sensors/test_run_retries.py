"""Runs whose retry the daemon abandoned run again (``abandoned_run_retries``).

The database test makes the daemon abandon a retry the way it does after a code-server
restart: Dagster's own retry step (``consume_new_runs_for_automatic_reexecution``) runs with
the daemon's copy of the code location unreachable. What it leaves (``will_retry=false`` and
no retry) is what the sensor then finds.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.events import JobFailureData, RunFailureReason
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

from morpheus_pipelines.sensors.run_retries import (
    RETRY_OF_TAG,
    abandoned_run_retries,
    carried_tags,
    needs_retry,
)
from tests.support.instance import PROJECT_ROOT, project_instance

LOCATION = "morpheus_pipelines"
PARTITION = "2026-12-06"


@pytest.mark.parametrize(
    ("tags", "gave_up", "expected"),
    [
        ({"dagster/will_retry": "false"}, True, True),
        ({"dagster/will_retry": "false"}, False, False),  # an asset failed: not the daemon's
        ({"dagster/will_retry": "true"}, True, False),  # the daemon is still on it
        ({"dagster/will_retry": "false", "dagster/auto_retry_run_id": "r2"}, True, False),
        ({"dagster/will_retry": "false", RETRY_OF_TAG: "r0"}, True, False),  # one retry a loss
    ],
)
def test_only_a_retry_the_daemon_meant_and_abandoned_is_made(tags, gave_up, expected) -> None:
    assert needs_retry(tags, gave_up) is expected


def test_the_new_run_keeps_the_failed_run_s_own_tags_and_names_it() -> None:
    tags = {"dagster/partition": PARTITION, ".dagster/grpc_info": "{}", "team": "apac"}
    assert carried_tags(tags, "r1") == {"team": "apac", RETRY_OF_TAG: "r1"}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lost_run(
    instance: dg.DagsterInstance, port: int, tags: dict[str, str], reason: RunFailureReason
) -> DagsterRun:
    """A started daily-job run launched from the code server at ``port``, failed as run
    monitoring fails one whose worker is gone (or as a failing asset fails it)."""
    origin = RemoteJobOrigin(
        repository_origin=RemoteRepositoryOrigin(
            code_location_origin=GrpcServerCodeLocationOrigin(
                host="127.0.0.1", port=port, location_name=LOCATION
            ),
            repository_name="__repository__",
        ),
        job_name="apac_daily_job",
    )
    run = instance.add_run(
        DagsterRun(
            job_name="apac_daily_job",
            run_id=make_new_run_id(),
            tags={"dagster/partition": PARTITION, **tags},
            status=dg.DagsterRunStatus.STARTED,
            remote_job_origin=origin,
        )
    )
    instance.report_run_failed(run, "lost", JobFailureData(error=None, failure_reason=reason))
    return instance.get_run_by_id(run.run_id)


def _the_daemon_retries(instance: dg.DagsterInstance, port: int) -> None:
    """The daemon's retry step over every failed run, its code location unreachable."""
    target = GrpcServerTarget(host="127.0.0.1", port=port, socket=None, location_name=LOCATION)
    with WorkspaceProcessContext(instance, target) as workspace:
        records = instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
        for _ in consume_new_runs_for_automatic_reexecution(
            workspace, records, logging.getLogger("test")
        ):
            pass


@pytest.mark.database
def test_a_run_whose_retry_the_daemon_abandoned_runs_again_once(
    database_url: str, instance_database: str, tmp_path: Path
) -> None:
    deployed = yaml.safe_load((PROJECT_ROOT / "deploy" / "dagster.yaml").read_text())
    settings = {"run_retries": deployed["run_retries"]}
    with project_instance(database_url, instance_database, tmp_path, settings) as (instance, _):
        port = _closed_port()
        lost = _lost_run(instance, port, {"team": "apac"}, RunFailureReason.RUN_EXCEPTION)
        asset_failed = _lost_run(instance, port, {}, RunFailureReason.STEP_FAILURE)
        lost_again = _lost_run(instance, port, {RETRY_OF_TAG: "r0"}, RunFailureReason.RUN_EXCEPTION)
        assert lost.tags["dagster/will_retry"] == "true"
        assert asset_failed.tags["dagster/will_retry"] == "false"

        _the_daemon_retries(instance, port)

        # Without the sensor this is the end: the lost run is marked never to be retried.
        abandoned = instance.get_run_by_id(lost.run_id)
        assert abandoned.tags["dagster/will_retry"] == "false"
        assert not instance.get_runs(dg.RunsFilter(tags={"dagster/parent_run_id": lost.run_id}))
        with dg.build_sensor_context(instance=instance) as context:
            first = abandoned_run_retries(context)
            second = abandoned_run_retries(context)
        (request,) = first.run_requests
        assert request.run_key == f"retry-of-{lost.run_id}"
        assert (request.job_name, request.partition_key) == ("apac_daily_job", PARTITION)
        assert request.tags == {"team": "apac", RETRY_OF_TAG: lost.run_id}
        # The same key on every tick: Dagster launches a key once.
        assert [r.run_key for r in second.run_requests] == [request.run_key]
        assert lost_again.run_id not in request.run_key
