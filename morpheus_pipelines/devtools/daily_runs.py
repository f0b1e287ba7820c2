"""The daily job on a running :class:`~.topology.Topology`, driven as an operator would: the
data set loaded, every host started in order, runs launched through the webserver's GraphQL
(a backfill, or a run queued for the daemon like a schedule's) and followed to their end."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

import psycopg

from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.demo.dataset import DemoDataset, generate_dataset
from morpheus_pipelines.devtools.hosts import HostsError, wait_until
from morpheus_pipelines.devtools.source import SOURCE_COLUMNS, replace_source_tenants
from morpheus_pipelines.devtools.topology import LOCATION, Topology, topology
from morpheus_pipelines.sensors.run_retries import RETRY_OF_TAG

JOB = "apac_daily_job"
REPOSITORY = {"repositoryLocationName": LOCATION, "repositoryName": "__repository__"}
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}

_ERRORS = "... on PythonError { message } ... on InvalidSubsetError { message }"
LAUNCH_BACKFILL = f"""
mutation ($params: LaunchBackfillParams!) {{
  launchPartitionBackfill(backfillParams: $params) {{
    __typename ... on LaunchBackfillSuccess {{ backfillId }} {_ERRORS}
  }}
}}"""
LAUNCH_RUN = f"""
mutation ($params: ExecutionParams!) {{
  launchPipelineExecution(executionParams: $params) {{
    __typename ... on LaunchRunSuccess {{ run {{ id }} }} {_ERRORS}
  }}
}}"""
REEXECUTE = f"""
mutation ($id: String!) {{
  launchPipelineReexecution(reexecutionParams: {{parentRunId: $id, strategy: FROM_FAILURE}}) {{
    __typename ... on LaunchRunSuccess {{ run {{ id }} }} {_ERRORS}
  }}
}}"""
BACKFILL_RUNS = """
query ($id: String!) { partitionBackfillOrError(backfillId: $id) {
  ... on PartitionBackfill { status runs(limit: 10) { id status } } } }"""
RUN = """
query ($id: ID!) { runOrError(runId: $id) { ... on Run {
  id status startTime endTime
  stepStats { stepKey status startTime endTime } } } }"""
RUNS_TAGGED = """
query ($key: String!, $value: String!) {
  runsOrError(filter: {tags: [{key: $key, value: $value}]}) {
    ... on Runs { results { id status tags { key value } } } } }"""
EVENTS = """
query ($id: ID!) { logsForRun(runId: $id) { ... on EventConnection {
  events { __typename ... on MessageEvent { message } } } } }"""


def dataset_for(day: date, *, tenants: int, companies: int) -> DemoDataset:
    """The deterministic demo data set with ``tenants`` source tenants for ``day``."""
    return generate_dataset(tenants=tenants, companies=companies, partition_day=day, seed=7)


@contextmanager
def daily_topology(
    dataset: DemoDataset,
    *,
    isolated: bool,
    prefix: str = "mph",
    subnet: str = "10.213.0.0/24",
) -> Iterator[Topology]:
    """Every host up in the order of docs/multi-host.md, ``dataset`` loaded: db (started by
    :func:`.topology.topology`), the schemas migrated and the source loaded, emulators, code
    server, webserver and daemon, intake."""
    with topology(isolated=isolated, prefix=prefix, subnet=subnet) as top:
        upgrade(top.warehouse_url)
        frame = dataset.tenants[list(SOURCE_COLUMNS)].astype(object)
        frame = frame.where(frame.notna(), None)
        rows = frame.itertuples(index=False, name=None)
        replace_source_tenants(top.warehouse_url, "devops", rows)
        del frame, rows
        top.configure(dataset.environment())
        top.migrate_instance()
        top.start_emulators(dataset.hubspot_data(), dataset.domain_intel)
        top.start_code_server()
        top.start_dagster()
        top.start_intake()
        yield top


def partition_tags(partition: str) -> list[dict[str, str]]:
    return [
        {"key": "dagster/partition", "value": partition},
        {"key": "dagster/partition_set", "value": f"{JOB}_partition_set"},
    ]


def launch_backfill(top: Topology, partition: str) -> str:
    """A backfill of ``partition`` of the daily job; its id."""
    params = {
        "selector": {"partitionSetName": f"{JOB}_partition_set", "repositorySelector": REPOSITORY},
        "partitionNames": [partition],
        "fromFailure": False,
    }
    result = top.graphql(LAUNCH_BACKFILL, {"params": params})["launchPartitionBackfill"]
    if result["__typename"] != "LaunchBackfillSuccess":
        raise HostsError(f"backfill not launched: {result}")
    return result["backfillId"]


def backfill_run(top: Topology, backfill_id: str, timeout: float = 120) -> str:
    """The run the daemon made for a one-partition backfill."""

    def run_id() -> str | None:
        backfill = top.graphql(BACKFILL_RUNS, {"id": backfill_id})["partitionBackfillOrError"]
        return backfill["runs"][0]["id"] if backfill["runs"] else None

    return wait_until(run_id, timeout=timeout, what=f"no run for backfill {backfill_id}")


def queue_run(top: Topology, partition: str) -> str:
    """A run of the daily job for ``partition`` put in the queue, as a schedule's tick
    does; the daemon launches it."""
    params = {
        "selector": {**REPOSITORY, "pipelineName": JOB},
        "mode": "default",
        "runConfigData": {},
        "executionMetadata": {"tags": partition_tags(partition)},
    }
    result = top.graphql(LAUNCH_RUN, {"params": params})["launchPipelineExecution"]
    if result["__typename"] != "LaunchRunSuccess":
        raise HostsError(f"run not launched: {result}")
    return result["run"]["id"]


def reexecute(top: Topology, run_id: str) -> str:
    """The failed run re-executed from failure (the operator's "Re-execute from failure")."""
    result = top.graphql(REEXECUTE, {"id": run_id})["launchPipelineReexecution"]
    if result["__typename"] != "LaunchRunSuccess":
        raise HostsError(f"re-execution not launched: {result}")
    return result["run"]["id"]


def run(top: Topology, run_id: str) -> dict[str, Any]:
    """The run as the webserver shows it, with every tag from the instance database (the
    GraphQL ``tags`` leave the hidden ones out)."""
    found = top.graphql(RUN, {"id": run_id})["runOrError"]
    found["tags"] = run_tags(top, run_id)
    return found


def run_tags(top: Topology, run_id: str) -> dict[str, str]:
    with psycopg.connect(libpq_url(top.instance_url), connect_timeout=10) as conn:
        rows = conn.execute("SELECT key, value FROM run_tags WHERE run_id = %s", (run_id,))
        return dict(rows.fetchall())


def wait_for_run(top: Topology, run_id: str, timeout: float, statuses=FINISHED) -> dict[str, Any]:
    """The run once its status is one of ``statuses``."""

    def reached() -> dict[str, Any] | None:
        found = run(top, run_id)
        return found if found.get("status") in statuses else None

    return wait_until(
        reached, timeout=timeout, what=f"run {run_id} not in {sorted(statuses)}", interval=0.5
    )


def wait_for_step(top: Topology, run_id: str, step: str, timeout: float) -> None:
    """Until ``step`` of the run has started (its status is no longer unknown)."""

    def started() -> bool:
        found = run(top, run_id)
        if found["status"] in FINISHED:
            raise HostsError(f"run {run_id} ended ({found['status']}) before {step} started")
        return any(s["stepKey"] == step for s in found.get("stepStats") or [])

    wait_until(started, timeout=timeout, what=f"step {step} of {run_id} not started", interval=0.1)


def retries_of(top: Topology, run_id: str) -> list[dict[str, Any]]:
    """The runs made to retry ``run_id``: by run retries (tagged ``dagster/parent_run_id``)
    or, when the daemon abandoned that retry, by the ``abandoned_run_retries`` sensor."""
    runs = [
        r
        for key in ("dagster/parent_run_id", RETRY_OF_TAG)
        for r in top.graphql(RUNS_TAGGED, {"key": key, "value": run_id})["runsOrError"]["results"]
    ]
    for r in runs:
        r["tags"] = run_tags(top, r["id"])
    return runs


def engine_messages(top: Topology, run_id: str) -> list[str]:
    events = top.graphql(EVENTS, {"id": run_id})["logsForRun"]["events"]
    return [e["message"] for e in events if e.get("message")]


def step_seconds(found: dict[str, Any]) -> dict[str, float]:
    """Wall seconds of each step of a finished run (its step events' start and end)."""
    return {
        s["stepKey"]: s["endTime"] - s["startTime"]
        for s in found["stepStats"]
        if s["startTime"] and s["endTime"]
    }


def elapsed(started: float) -> float:
    return time.monotonic() - started
