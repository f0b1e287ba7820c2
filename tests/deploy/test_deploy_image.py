"""The image's install and entry commands, run without Docker (there is no daemon here).

The build stage of deploy/Dockerfile is replayed in a fresh directory: its COPY steps copy the
same tracked files, its ``uv sync`` lines run as written into a new virtual environment. Then
deploy/entrypoint.sh — the image's ENTRYPOINT — starts the code server, the webserver, the
daemon and the intake API from that environment, outside the repository, on the production
deploy/dagster.yaml and a real PostgreSQL, and each must answer its health check."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.dagster_ui import free_port
from tests.support.image import stages

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DEADLINE_S = 180.0
INHERITED_PREFIXES = ("MORPHEUS_", "DAGSTER_", "HUBSPOT_", "META_", "UV_", "VIRTUAL_ENV")


def _tracked(path: str) -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--", path], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return listed.stdout.splitlines()


def _copy(words: list[str], build_dir: Path, workdir: str) -> None:
    """A COPY of the build context, from tracked files only: nothing untracked can help."""
    *sources, destination = words
    target_dir = build_dir / workdir.lstrip("/") / destination
    for source in sources:
        files = _tracked(source)
        assert files, f"COPY {source}: nothing tracked there"
        for name in files:
            inside = Path(name).relative_to(source) if (ROOT / source).is_dir() else Path(name).name
            target = target_dir / inside
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)


def _base_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(INHERITED_PREFIXES)}


def _install(build_dir: Path, venv: Path) -> list[list[str]]:
    """Replay the build stage; returns the commands it ran."""
    build = stages(DEPLOY / "Dockerfile")["build"]
    env = _base_environment() | build.env | {"UV_PROJECT_ENVIRONMENT": str(venv)}
    ran: list[list[str]] = []
    for kind, words in build.steps:
        if kind == "COPY":
            if any(word.startswith("--from=") for word in words):
                continue  # the uv binary itself: this machine's uv stands in for it
            _copy(words, build_dir, ".")
        else:
            assert words[:2] == ["uv", "sync"], f"a build step that is not `uv sync`: {words}"
            subprocess.run(words, cwd=build_dir, env=env, check=True, capture_output=True)
            ran.append(words)
    return ran


class Processes:
    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.started: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, role: str, env: dict[str, str], cwd: Path) -> None:
        log = (self.logs / f"{role}.log").open("wb")
        self.started[role] = subprocess.Popen(
            [str(DEPLOY / "entrypoint.sh"), role],
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def tail(self, role: str) -> str:
        return "\n".join((self.logs / f"{role}.log").read_text(errors="replace").splitlines()[-30:])

    def assert_alive(self, role: str) -> None:
        code = self.started[role].poll()
        if code is not None:
            pytest.fail(f"{role} exited with {code}:\n{self.tail(role)}")

    def stop_all(self) -> None:
        for process in self.started.values():
            if process.poll() is None:
                os.killpg(process.pid, 15)
        for process in self.started.values():
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, 9)
                process.wait()


def _until(role: str, processes: Processes, check, deadline: float) -> object:
    """Poll ``check`` (None until it answers) until the deadline; the process must stay up."""
    last: object = None
    while time.monotonic() < deadline:
        processes.assert_alive(role)
        try:
            answer = check()
        except OSError as exc:
            answer, last = None, exc
        if answer is not None:
            return answer
        time.sleep(0.25)
    pytest.fail(f"{role} did not answer in {DEADLINE_S:.0f} s ({last!r}):\n{processes.tail(role)}")


def _get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


def _command_ok(argv: list[str], env: dict[str, str]) -> bool:
    return subprocess.run(argv, env=env, capture_output=True, timeout=60).returncode == 0


@pytest.fixture
def processes(tmp_path: Path) -> Iterator[Processes]:
    started = Processes(tmp_path)
    yield started
    started.stop_all()


@pytest.mark.database
def test_the_image_commands_install_and_every_entry_point_answers(
    tmp_path: Path, database_url: str, instance_database: str, processes: Processes
) -> None:
    build_dir, venv = tmp_path / "src", tmp_path / "venv"
    build_dir.mkdir()
    ran = _install(build_dir, venv)
    assert ran and all({"--frozen", "--no-dev"} <= set(words) for words in ran)
    assert not (venv / "bin" / "pytest").exists(), "the dev group was installed"
    # Installed as a package, not an editable link back to the build directory.
    shutil.rmtree(build_dir)

    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copy2(DEPLOY / "dagster.yaml", dagster_home / "dagster.yaml")
    ports = {name: free_port() for name in ("grpc", "webserver", "intake")}
    env = _base_environment() | {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "DAGSTER_HOME": str(dagster_home),
        "MORPHEUS_HOME": str(tmp_path / "morpheus_home"),
        "MORPHEUS_DATABASE_URL": database_url,
        "MORPHEUS_DAGSTER_DATABASE_URL": instance_database,
        "DAGSTER_COMPUTE_LOGS_BUCKET": "morpheus-test-compute-logs",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",
        "DAGSTER_GRPC_HOST": "127.0.0.1",
        "DAGSTER_GRPC_HOST_NAME": "127.0.0.1",
        "DAGSTER_GRPC_PORT": str(ports["grpc"]),
        "DAGSTER_WEBSERVER_HOST": "127.0.0.1",
        "DAGSTER_WEBSERVER_PORT": str(ports["webserver"]),
        "MORPHEUS_INTAKE_HOST": "127.0.0.1",
        "MORPHEUS_INTAKE_PORT": str(ports["intake"]),
        "MORPHEUS_INTAKE_WORKERS": "1",
    }
    env.pop("PYTHONPATH", None)
    assert shutil.which("dagster", path=env["PATH"]) == str(venv / "bin" / "dagster")
    grpc_check = [
        str(DEPLOY / "entrypoint.sh"), "dagster", "api", "grpc-health-check",
        "--host", "127.0.0.1", "--port", str(ports["grpc"]),
    ]  # fmt: skip
    assert not _command_ok(grpc_check, env), "the health check passes with nothing listening"

    workdir = tmp_path / "run"  # not the repository: the package must come from the venv
    workdir.mkdir()
    for role in ("code-server", "intake"):
        processes.start(role, env, workdir)
    deadline = time.monotonic() + DEADLINE_S
    _until("code-server", processes, lambda: _command_ok(grpc_check, env) or None, deadline)
    liveness = ["dagster-daemon", "liveness-check"]
    assert not _command_ok(liveness, env), "the daemon is live before it started"
    for role in ("webserver", "daemon"):
        processes.start(role, env, workdir)

    status, body = _until(
        "intake", processes, lambda: _get(f"http://127.0.0.1:{ports['intake']}/healthz"), deadline
    )
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    status, _ = _get(f"http://127.0.0.1:{ports['intake']}/openapi.json")
    assert status == 200

    webserver = f"http://127.0.0.1:{ports['webserver']}"
    status, body = _until(
        "webserver", processes, lambda: _get(f"{webserver}/server_info"), deadline
    )
    assert status == 200 and "dagster_webserver_version" in json.loads(body)
    location = _until("webserver", processes, lambda: _loaded_location(webserver), deadline)
    assert location == ("morpheus_pipelines", "RepositoryLocation")

    _until("daemon", processes, lambda: _command_ok(liveness, env) or None, deadline)


def _loaded_location(webserver: str) -> tuple[str, str] | None:
    query = json.dumps(
        {
            "query": "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus"
            " locationOrLoadError { __typename } } } } }"
        }
    ).encode()
    request = urllib.request.Request(
        f"{webserver}/graphql", data=query, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        entries = json.loads(response.read())["data"]["workspaceOrError"]["locationEntries"]
    if not entries or entries[0]["loadStatus"] != "LOADED":
        return None
    return entries[0]["name"], (entries[0]["locationOrLoadError"] or {}).get("__typename", "")
