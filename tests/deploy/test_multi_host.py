"""The production topology as separate hosts (docs/multi-host.md).

The module builds, on this machine, one Linux network namespace per host, each with its own
address on a bridge (``morpheus_pipelines.devtools.hosts``): ``db`` (PostgreSQL: warehouse,
Dagster instance, source schema; pg_hba admits the subnet with scram-sha-256), ``emulators``
(HubSpot and Domain Intelligence), ``code`` (``dagster api grpc``; the run workers are its
children), ``dagster`` (``dagster-webserver`` and ``dagster-daemon run`` with
``deploy/multi-host/dagster.yaml``: queued runs, run monitoring, run retries) and ``intake``
(``morpheus serve``). Every process talks to another host by its address, over the bridge;
the test drives Dagster from the root namespace through the webserver's GraphQL, as an
operator would, with a few hundred tenants.

* a backfill of the daily job's partition, run by the daemon, succeeds and routes every
  candidate;
* the code host's processes SIGKILLed mid-run (the code server and its run worker) and the
  code server restarted once Dagster has given the location up: run monitoring fails the run,
  and its retry completes it (run retries', or the ``abandoned_run_retries`` sensor's when
  the daemon abandoned its own);
* the same loss with the run failed while the daemon cannot reach the location: the daemon
  abandons its retry, and the ``abandoned_run_retries`` sensor's run completes the partition;
* PostgreSQL restarted while routing is inside a transaction: the run fails, the partition
  is visibly unfinished, and the run's retry (a lost worker) or a re-execution from failure
  (a failed asset, which run retries leave alone) completes it with exactly the clean run's
  rows.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import psycopg
import pytest

from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools import daily_runs as runs
from morpheus_pipelines.devtools.demo.runner import yesterday_cst
from morpheus_pipelines.devtools.hosts import namespace_pids, namespaces, network
from morpheus_pipelines.devtools.topology import Topology
from morpheus_pipelines.sensors.run_retries import RETRY_OF_TAG

pytestmark = [pytest.mark.database, pytest.mark.slow]

if os.geteuid() != 0:  # a failure, not a skip: the topology is what this file tests
    pytest.fail("network namespaces need root: run the suite as root", pytrace=False)

TENANTS = 300
PARTITION = yesterday_cst()
RUN_TIMEOUT_S = 180
# run_monitoring.poll_interval_seconds of deploy/multi-host/dagster.yaml is 5: the failure
# comes within a few polls of the code server answering again.
MONITORING_TIMEOUT_S = 60
# Rows of the partition, per table: what a complete run leaves (a partial one has fewer).
COUNTS = {
    "candidates": "SELECT count(*) FROM apac_tenant_candidates WHERE partition_key = %(p)s",
    "enriched": "SELECT count(*) FROM apac_enriched_tenants WHERE partition_key = %(p)s",
    "decisions": "SELECT routing_rule, count(*) FROM apac_routing_decisions "
    "WHERE partition_key = %(p)s GROUP BY 1 ORDER BY 1",
    "buckets": "SELECT (SELECT count(*) FROM apac_active_tenants WHERE retired_at IS NULL), "
    "(SELECT count(*) FROM apac_sales_owned_tenants WHERE retired_at IS NULL)",
    "scores": "SELECT count(*) FROM apac_tenant_score_snapshots WHERE partition_key = %(p)s",
    "summary": "SELECT count(*) FROM apac_daily_summary_tenants WHERE partition_key = %(p)s",
    "routing_state": "SELECT count(*) FROM apac_routing_states WHERE partition_key = %(p)s",
}


def _prefix() -> str:
    """Names and a subnet of this process's own: xdist workers may each build one."""
    return f"mt{os.getpid() % 1000}"


def _subnet() -> str:
    return f"10.213.{100 + os.getpid() % 100}.0/24"


@pytest.fixture(scope="module")
def hosts() -> Iterator[Topology]:
    dataset = runs.dataset_for(PARTITION, tenants=TENANTS, companies=50)
    with runs.daily_topology(dataset, isolated=True, prefix=_prefix(), subnet=_subnet()) as top:
        yield top
    assert top.net.leftovers() == []


def partition_rows(top: Topology) -> dict[str, list[tuple]]:
    with psycopg.connect(libpq_url(top.warehouse_url), connect_timeout=10) as conn:
        return {
            name: conn.execute(statement, {"p": PARTITION.isoformat()}).fetchall()
            for name, statement in COUNTS.items()
        }


@pytest.fixture(scope="module")
def clean_run(hosts: Topology) -> tuple[dict, dict[str, list[tuple]]]:
    """The daily job for the partition, as a backfill the daemon runs: the run and the
    partition's rows it left (what every later run must leave too)."""
    backfill = runs.launch_backfill(hosts, PARTITION.isoformat())
    run_id = runs.backfill_run(hosts, backfill, timeout=RUN_TIMEOUT_S)
    finished = runs.wait_for_run(hosts, run_id, RUN_TIMEOUT_S)
    return finished, partition_rows(hosts)


def test_the_daily_job_runs_to_completion_across_hosts(hosts, clean_run) -> None:
    finished, rows = clean_run
    assert finished["status"] == "SUCCESS", hosts.logs()
    tags = finished["tags"]
    # A backfill of single-run assets names its partitions as a range.
    partition = tags.get("dagster/partition", tags.get("dagster/asset_partition_range_start"))
    assert partition == PARTITION.isoformat(), tags
    assert "dagster/backfill" in tags
    # Launched by the daemon on the code host's gRPC server, over the bridge.
    assert hosts.address("code") in tags[".dagster/grpc_info"]
    decided = sum(n for _, n in rows["decisions"])
    (candidates,) = rows["candidates"][0]
    assert candidates > 0 and decided >= candidates, rows
    assert rows["routing_state"] == [(1,)]
    assert sum(rows["buckets"][0]) > 0
    # The intake host serves on its own address, off the same database.
    answer = __import__("requests").get(f"{hosts.intake_url}/healthz", timeout=5)
    assert answer.status_code == 200


def test_a_lost_code_server_fails_the_run_and_its_retry_completes_it(hosts, clean_run) -> None:
    _, expected = clean_run
    run_id = runs.queue_run(hosts, PARTITION.isoformat())
    runs.wait_for_step(hosts, run_id, "enriched_tenants", timeout=RUN_TIMEOUT_S)
    assert runs.run(hosts, run_id)["status"] == "STARTED"

    _kill_code_host(hosts)
    assert runs.run(hosts, run_id)["status"] == "STARTED"
    # Down for as long as a redeploy takes: until Dagster has given the location up.
    runs.wait_until(
        lambda: hosts.location_error() is not None,
        timeout=RUN_TIMEOUT_S,
        what="the webserver still serving the lost code location",
    )
    hosts.start_code_server()
    restarted = time.monotonic()

    failed = runs.wait_for_run(hosts, run_id, MONITORING_TIMEOUT_S)
    assert failed["status"] == "FAILURE"
    assert time.monotonic() - restarted < MONITORING_TIMEOUT_S
    assert any("does not run it" in m for m in runs.engine_messages(hosts, run_id))

    # The daemon's retry, or the sensor's when the daemon's copy of the location was still
    # reconnecting and it abandoned its own (now and then).
    retry = _the_retry(hosts, run_id)
    by_daemon = retry["tags"].get("dagster/retry_number") == "1"
    print(f"retried by: {'the daemon' if by_daemon else 'the sensor'}")
    assert by_daemon or (
        retry["tags"].get(RETRY_OF_TAG) == run_id
        and "Failed to retry run" in runs.engine_messages(hosts, run_id)
    ), retry["tags"]
    assert runs.wait_for_run(hosts, retry["id"], RUN_TIMEOUT_S)["status"] == "SUCCESS"
    assert partition_rows(hosts) == expected
    _one_retry_after_a_sensor_tick(hosts, run_id, retry)


def test_a_retry_the_daemon_abandoned_is_made_by_the_sensor(hosts, clean_run) -> None:
    _, expected = clean_run
    run_id = runs.queue_run(hosts, PARTITION.isoformat())
    runs.wait_for_step(hosts, run_id, "enriched_tenants", timeout=RUN_TIMEOUT_S)
    _kill_code_host(hosts)
    runs.wait_until(
        lambda: hosts.location_error() is not None,
        timeout=RUN_TIMEOUT_S,
        what="the webserver still serving the lost code location",
    )
    # The run fails while the daemon cannot reach the location, as when run monitoring's poll
    # comes before the daemon has reconnected: the daemon's retry fails, and it gives up.
    with _instance(hosts) as instance:
        instance.report_run_failed(instance.get_run_by_id(run_id), "its code server restarted")
    # The daemon reports the failure, then tags the run: both, before the location is back.
    runs.wait_until(
        lambda: (
            "Failed to retry run" in runs.engine_messages(hosts, run_id)
            and runs.run_tags(hosts, run_id).get("dagster/will_retry") == "false"
        ),
        timeout=MONITORING_TIMEOUT_S,
        what=f"the daemon did not give up retrying {run_id}",
    )
    hosts.start_code_server()

    retry = _the_retry(hosts, run_id)
    assert retry["tags"][RETRY_OF_TAG] == run_id
    assert retry["tags"]["dagster/sensor_name"] == "abandoned_run_retries"
    assert runs.wait_for_run(hosts, retry["id"], RUN_TIMEOUT_S)["status"] == "SUCCESS"
    assert partition_rows(hosts) == expected
    _one_retry_after_a_sensor_tick(hosts, run_id, retry)


def test_a_database_restart_mid_run_leaves_the_partition_whole(hosts, clean_run) -> None:
    _, expected = clean_run
    blocker = psycopg.connect(libpq_url(hosts.warehouse_url))
    try:
        # Routing's bucket writes wait behind this lock: the restart comes while routing is
        # inside a transaction, every time (not only when a poll happens to land there).
        blocker.execute("LOCK TABLE apac_active_tenants IN EXCLUSIVE MODE")
        run_id = runs.queue_run(hosts, PARTITION.isoformat())
        runs.wait_for_step(hosts, run_id, "routed_tenants", timeout=RUN_TIMEOUT_S)
        runs.wait_until(
            lambda: blocker.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            ).fetchone()[0],
            timeout=RUN_TIMEOUT_S,
            what="routing not waiting on the bucket table",
        )
        during = runs.run(hosts, run_id)
        assert during["status"] == "STARTED"
        (routing,) = [s for s in during["stepStats"] if s["stepKey"] == "routed_tenants"]
        assert routing["endTime"] is None, "the step waiting is routing's"
        hosts.postgres("stop")  # fast shutdown: every open transaction rolls back
    finally:
        blocker.close()
    hosts.postgres("start")

    first = runs.wait_for_run(hosts, run_id, RUN_TIMEOUT_S)
    assert first["status"] == "FAILURE", "routing's connection was cut mid-transaction"
    print(f"after the restart: {first['tags'].get('dagster/failure_reason')}")  # the path (-s)
    if first["tags"].get("dagster/will_retry") == "true":
        final = runs.wait_for_run(hosts, _the_retry(hosts, run_id)["id"], RUN_TIMEOUT_S)
    else:
        # An asset failed on the lost connection: run retries leave that to the operator
        # (retry_on_asset_or_op_failure: false). Until then the partition is visibly
        # unfinished: routing forgot its state, so no later day starts from it.
        assert first["tags"].get("dagster/failure_reason") == "STEP_FAILURE", first["tags"]
        assert partition_rows(hosts)["routing_state"] == [(0,)]
        final = runs.wait_for_run(hosts, runs.reexecute(hosts, run_id), RUN_TIMEOUT_S)
    assert final["status"] == "SUCCESS", hosts.logs()
    assert partition_rows(hosts) == expected


def _kill_code_host(top: Topology) -> None:
    """The code host goes down: its server and the run workers it started."""
    top.processes["grpc"].kill(signal.SIGKILL)
    for pid in namespace_pids(top.host("code").namespace):
        os.kill(pid, signal.SIGKILL)


@contextmanager
def _instance(top: Topology) -> Iterator[dg.DagsterInstance]:
    """The topology's Dagster instance, as the dagster host's processes open it."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MORPHEUS_DAGSTER_DATABASE_URL", top.instance_url)
        with dg.DagsterInstance.from_config(str(top.work / "dagster" / "dagster_home")) as inst:
            yield inst


SENSOR_TICKS = """query ($selector: SensorSelector!) { sensorOrError(sensorSelector: $selector) {
    ... on Sensor { sensorState { ticks(limit: 1) { timestamp status } } } } }"""


def _one_retry_after_a_sensor_tick(top: Topology, run_id: str, retry: dict) -> None:
    """Once a tick of ``abandoned_run_retries`` has run after the retry finished, the lost
    run still has that one retry."""
    finished = time.time()
    selector = {"repositoryLocationName": "morpheus_pipelines", "repositoryName": "__repository__"}
    selector["sensorName"] = "abandoned_run_retries"

    def ticked() -> bool:
        found = top.graphql(SENSOR_TICKS, {"selector": selector})["sensorOrError"]
        ticks = found["sensorState"]["ticks"]
        # SKIPPED: the tick saw the retry and asked for nothing (a failed tick proves nothing).
        return bool(ticks) and ticks[0]["timestamp"] > finished and ticks[0]["status"] == "SKIPPED"

    runs.wait_until(ticked, timeout=RUN_TIMEOUT_S, what="no tick of abandoned_run_retries")
    assert [r["id"] for r in runs.retries_of(top, run_id)] == [retry["id"]]


def _the_retry(top: Topology, run_id: str) -> dict:
    try:
        return runs.wait_until(
            lambda: (runs.retries_of(top, run_id) or [None])[0],
            timeout=RUN_TIMEOUT_S,
            what=f"no retry of {run_id}",
        )
    except TimeoutError as error:
        # What the daemon decided from: the failed run's tags, and the hosts' log tails.
        raise AssertionError(
            f"{error}; the run's tags: {runs.run(top, run_id).get('tags')}\n{top.logs()}"
        ) from error


def test_teardown_leaves_no_namespace_link_or_process(tmp_path) -> None:
    """Even when the body fails, and for a process that left its parent's session."""
    prefix, subnet = f"mz{os.getpid() % 1000}", f"10.214.{os.getpid() % 200}.0/24"
    # Forks a child that leaves the session and the output pipe, and outlives its parent.
    orphan = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
        "    null = os.open(os.devnull, os.O_RDWR)\n"
        "    for fd in (0, 1, 2):\n        os.dup2(null, fd)\n    time.sleep(600)\n"
    )
    with (
        pytest.raises(RuntimeError, match="the body failed"),
        network(prefix, subnet, tmp_path, ["a", "b"]) as net,
    ):
        a, b = net.hosts["a"], net.hosts["b"]
        sleeper = a.spawn("sleep", ["sleep", "600"], env=os.environ)
        b.run([sys.executable, "-c", orphan])
        assert namespace_pids(b.namespace), "the orphan is running in b"
        b.spawn(
            "http",
            [sys.executable, "-m", "http.server", "-b", b.address, "8000"],
            env=os.environ,
        )
        connect = f"import socket; socket.create_connection(({b.address!r}, 8000), timeout=2)"
        runs.wait_until(
            lambda: subprocess.run(a.command([sys.executable, "-c", connect])).returncode == 0,
            timeout=30,
            what="a not reaching b's server over the bridge",
        )
        raise RuntimeError("the body failed")
    assert not {h.namespace for h in net.hosts.values()} & namespaces()
    assert net.leftovers() == []
    assert sleeper.popen.poll() is not None
