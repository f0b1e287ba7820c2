"""``morpheus dev``: a fresh instance gets the demo runs first, and SIGTERM or Ctrl-C stops the
whole ``dagster dev`` process tree within 10 s.

The shutdown test starts the real command (``python -m morpheus_pipelines.cli dev``) on a test
warehouse and an empty Dagster instance database, with ``--no-demo-runs`` (the demo runs are
covered by the in-process test below and would only make this one slow)."""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import psycopg
import pytest
import requests
from sqlalchemy import func, select

from morpheus_pipelines.crm.models import ReengagementSegmentMember
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import DAGSTER_URL_VARIABLE, with_driver
from morpheus_pipelines.devtools.demo.ownership import SEGMENT_LIST_IDS, members_per_segment_list
from morpheus_pipelines.devtools.demo.runner import (
    demo_environment,
    demo_partitions,
    materialise_if_new_instance,
)
from morpheus_pipelines.platform.settings import load_settings

PROJECT_ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 120.0
SHUTDOWN_LIMIT_S = 10.0
SCRUBBED_PREFIXES = (
    "MORPHEUS_",
    "HUBSPOT_",
    "DOMAIN_INTELLIGENCE_",
    "APAC_SALES_EMAILS",
    "FORCED_SALES_OWNED_TENANT_IDS",
    "DAGSTER_",
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- the demo runs on a fresh instance --------------------------------------------------------


def test_a_fresh_instance_gets_the_demo_runs_and_a_used_one_does_not(
    database_url: str, instance_database: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import morpheus_pipelines.definitions as definitions

    saved = dict(os.environ)
    try:
        for name in [n for n in os.environ if n.startswith(SCRUBBED_PREFIXES)]:
            del os.environ[name]
        os.environ.update(
            {
                "MORPHEUS_HOME": str(tmp_path / "home"),
                "MORPHEUS_DATABASE_URL": database_url,
                DAGSTER_URL_VARIABLE: instance_database,
            }
        )
        # What `morpheus dev` does before starting Dagster (the environment it sets up is
        # applied to os.environ; the resources read it when the definitions module loads).
        with demo_environment(load_settings(), tenants=300, companies=40) as demo:
            importlib.reload(definitions)
            days, week = demo_partitions(demo.partition_key)

            assert materialise_if_new_instance(demo.partition_key) is True
            with dg.DagsterInstance.get() as instance:
                runs = instance.get_runs()
            assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs)
            assert (
                sorted(
                    run.tags["dagster/partition"]
                    for run in runs
                    if run.job_name == "apac_daily_job"
                )
                == days
            )
            assert [
                r.tags["dagster/partition"] for r in runs if r.job_name == "apac_weekly_job"
            ] == [week]
            # the ownership slice's jobs run too, on the demo workspace (unpartitioned)
            assert sorted(r.job_name for r in runs if "dagster/partition" not in r.tags) == [
                "follow_up_escalation_job",
                "reengagement_job",
            ]
            # reengagement_job read the demo's segment members from its HubSpot lists
            listed = members_per_segment_list(database_url)
            assert [list_id for _, list_id, _ in listed] == list(SEGMENT_LIST_IDS.values())
            assert all(members > 0 for _, _, members in listed)
            with get_session(database_url) as session:
                unlisted = session.scalar(
                    select(func.count()).where(ReengagementSegmentMember.hubspotListId.is_(None))
                )
            assert unlisted == 0
            out = capsys.readouterr().out
            assert "no runs yet: materialising the demo partitions" in out
            assert out.count("daily run") == len(days) and "weekly run" in out

            # The instance has runs now: nothing more is run.
            assert materialise_if_new_instance(demo.partition_key) is None
            with dg.DagsterInstance.get() as instance:
                assert instance.get_runs_count() == len(days) + 3  # + weekly + 2 ownership jobs
            assert f"has {len(days) + 3:,} runs: not materialising" in capsys.readouterr().out
    finally:
        os.environ.clear()
        os.environ.update(saved)
        importlib.reload(definitions)


# -- processes, from /proc ---------------------------------------------------------------------


def proc_table() -> dict[int, tuple[int, str, str]]:
    """pid → (parent pid, start time, state)."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        table[int(name)] = (int(fields[1]), fields[19], fields[0])
    return table


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class Descendants:
    """Every process ever seen below ``root``, by pid and start time (a reused pid is a
    different process), with its command line."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, tuple[str, str]] = {}

    def record(self) -> None:
        table = proc_table()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _start, _state) in table.items():
            children.setdefault(ppid, []).append(pid)
        stack = [self.root, *self.seen]
        while stack:
            for pid in children.get(stack.pop(), ()):
                if pid not in self.seen:
                    self.seen[pid] = (table[pid][1], cmdline(pid))
                    stack.append(pid)

    def alive(self) -> dict[int, str]:
        table = proc_table()
        return {
            pid: command
            for pid, (start, command) in self.seen.items()
            if pid in table and table[pid][1] == start and table[pid][2] != "Z"
        }

    def kill_all(self) -> None:
        for pid in self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- the command -------------------------------------------------------------------------------


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env.update(extra)
    return env


def _log_tail(path: Path, lines: int = 60) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _wait_for_ui(process: subprocess.Popen, url: str, tree: Descendants, log: Path) -> None:
    """Poll (with a deadline) until the webserver answers and the code location is loaded,
    recording the process tree as it grows."""
    query = "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        tree.record()
        if process.poll() is not None:
            pytest.fail(f"morpheus dev exited with {process.returncode}:\n{_log_tail(log)}")
        with contextlib.suppress(requests.RequestException, ValueError, KeyError, TypeError):
            if requests.get(f"{url}/server_info", timeout=2).status_code == 200:
                body = requests.post(f"{url}/graphql", json={"query": query}, timeout=10).json()
                entries = body["data"]["workspaceOrError"]["locationEntries"]
                if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                    return
        time.sleep(0.5)
    pytest.fail(f"the UI did not answer within {STARTUP_TIMEOUT_S:.0f} s:\n{_log_tail(log)}")


def _start_dev(
    tmp_path: Path, database_url: str, instance_database: str, *options: str
) -> tuple[subprocess.Popen, Path]:
    """``morpheus dev`` in a child process on the test databases, output to a log file."""
    log = tmp_path / "morpheus_dev.log"
    env = _environment(
        {
            "MORPHEUS_HOME": str(tmp_path / "home"),
            "MORPHEUS_DATABASE_URL": database_url,
            DAGSTER_URL_VARIABLE: instance_database,
        }
    )
    command = [sys.executable, "-m", "morpheus_pipelines.cli", "dev"]
    command += ["--tenants", "300", "--companies", "40", *options]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return process, log


def _stop_and_time(
    process: subprocess.Popen, signum: signal.Signals, tree: Descendants, log: Path
) -> tuple[int, float]:
    sent = time.monotonic()
    process.send_signal(signum)
    try:
        code = process.wait(timeout=SHUTDOWN_LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"morpheus dev still running {SHUTDOWN_LIMIT_S:.0f} s after {signum.name}; "
            f"alive: {tree.alive()}\n{_log_tail(log)}"
        )
    elapsed = time.monotonic() - sent
    print(f"{signum.name}: morpheus dev exited with {code} after {elapsed:.2f} s")
    return code, elapsed


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_dev_stops_its_whole_process_tree(
    signum: signal.Signals, database_url: str, instance_database: str, tmp_path: Path
) -> None:
    port = free_port()
    process, log = _start_dev(
        tmp_path, database_url, instance_database, "--port", str(port), "--no-demo-runs"
    )
    tree = Descendants(process.pid)
    try:
        _wait_for_ui(process, f"http://127.0.0.1:{port}", tree, log)
        tree.record()
        commands = " | ".join(command for _start, command in tree.seen.values())
        # What was seen surviving before: the webserver, the daemon and the code server.
        for part in ("dagster dev", "dagster_webserver", "dagster._daemon", "grpc"):
            assert part in commands, f"{part!r} not among the descendants: {commands}"

        code, _elapsed = _stop_and_time(process, signum, tree, log)
        assert code == 128 + signum
        assert tree.alive() == {}, f"left behind after {signum.name}: {tree.alive()}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        tree.kill_all()
        shutil.rmtree(tmp_path / "home", ignore_errors=True)


def _runs(instance_database: str) -> list[str]:
    """The statuses of the runs in the instance database (none before it is migrated)."""
    url = with_driver(instance_database, "psycopg").replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(url, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('public.runs') IS NOT NULL").fetchone()[0]
        if not exists:
            return []
        return [row[0] for row in conn.execute("SELECT status FROM runs ORDER BY id")]


@pytest.mark.slow
def test_sigterm_during_the_demo_runs_stops_them(
    database_url: str, instance_database: str, tmp_path: Path
) -> None:
    """On a fresh instance `morpheus dev` first makes the demo runs; SIGTERM then stops the
    run in progress, starts no other and never starts Dagster."""
    process, log = _start_dev(tmp_path, database_url, instance_database, "--port", str(free_port()))
    tree = Descendants(process.pid)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not _runs(instance_database):
            tree.record()
            if process.poll() is not None:
                pytest.fail(f"morpheus dev exited with {process.returncode}:\n{_log_tail(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"no demo run started in {STARTUP_TIMEOUT_S:.0f} s:\n{_log_tail(log)}")
            time.sleep(0.2)

        code, _elapsed = _stop_and_time(process, signal.SIGTERM, tree, log)
        assert code == 130, _log_tail(log)  # KeyboardInterrupt
        # The run in progress was interrupted (or, signalled after its last step, finished)
        # and no other run started; Dagster itself never started.
        statuses = _runs(instance_database)
        assert len(statuses) == 1 and statuses[0] in ("FAILURE", "SUCCESS"), statuses
        output = log.read_text(errors="replace")
        assert "stopping on the signal received" in output, output[-3000:]
        assert "Dagster UI on" not in output
        assert tree.alive() == {}, f"left behind: {tree.alive()}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        tree.kill_all()
        shutil.rmtree(tmp_path / "home", ignore_errors=True)
