"""The Dagster instance's run launcher (``dagster.yaml`` → ``run_launcher``) when the run
workers live on the code-location host (docs/multi-host.md).

Dagster's ``DefaultRunLauncher`` asks the code location's gRPC server to start each run in a
child process of that server, but it cannot tell run monitoring whether that worker is still
alive: a run whose host went down stays ``STARTED`` until ``max_runtime_seconds``, and is then
*canceled*, which run retries never retry. This launcher adds the health check run monitoring
calls on every poll:

* the code server that launched the run answers and still lists the run → ``RUNNING``;
* it answers but does not list the run (it was restarted, so its workers died with it) → the
  run is ``FAILED``, and run retries start a new run for it;
* it does not answer → ``UNKNOWN`` counts as failed for run monitoring, so it is reported as
  ``RUNNING`` instead: the host may only be unreachable for a moment, and a host that never
  comes back is bounded by ``max_runtime_seconds``.
"""

from __future__ import annotations

import json

from dagster import DagsterRun
from dagster._core.errors import DagsterUserCodeUnreachableError
from dagster._core.launcher import CheckRunHealthResult, WorkerStatus
from dagster._core.launcher.default_run_launcher import DefaultRunLauncher
from dagster._core.storage.tags import GRPC_INFO_TAG
from dagster._grpc.__generated__ import dagster_api_pb2
from dagster._grpc.client import DagsterGrpcClient
from dagster._grpc.types import GetCurrentRunsResult
from dagster._serdes import deserialize_value

# A health check must not hold the monitoring loop for long when a host does not answer.
HEALTH_CHECK_TIMEOUT_SECONDS = 5


class HealthCheckedRunLauncher(DefaultRunLauncher):
    """``DefaultRunLauncher`` with a run-worker health check for run monitoring."""

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        info = run.tags.get(GRPC_INFO_TAG)
        if not info:
            return CheckRunHealthResult(WorkerStatus.UNKNOWN, "the run has no code-server tag")
        server = json.loads(info)
        client = DagsterGrpcClient(
            host=server.get("host"),
            port=server.get("port"),
            socket=server.get("socket"),
            use_ssl=bool(server.get("use_ssl", False)),
        )
        where = f"{server.get('host')}:{server.get('port')}"
        try:
            # get_current_runs() with a timeout of our own (its default is a minute).
            reply = client._query(  # a private call: the public one has no timeout
                "GetCurrentRuns", dagster_api_pb2.Empty, timeout=HEALTH_CHECK_TIMEOUT_SECONDS
            )
        except DagsterUserCodeUnreachableError:
            return CheckRunHealthResult(WorkerStatus.RUNNING, f"code server {where} did not answer")
        serialized = reply.serialized_current_runs
        runs = deserialize_value(serialized, GetCurrentRunsResult).current_runs
        if run.run_id in runs:
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(
            WorkerStatus.FAILED,
            f"code server {where} does not run it (restarted since the run was launched?)",
        )
