"""The real Dagster webserver and daemon (``dagster dev``) over a test database.

``dagster_ui`` starts ``python -m dagster dev`` in its own process group with:

* ``DAGSTER_HOME`` a temporary directory holding a copy of the project's ``dagster.yaml``
  (so the instance is the project's: Postgres storage, queued run coordinator, pools);
* ``MORPHEUS_DATABASE_URL`` a fresh migrated warehouse database with a small generated data
  set loaded as the DevOps source table;
* ``MORPHEUS_DAGSTER_DATABASE_URL`` a second, empty database for the instance storage;
* the HubSpot and Domain Intelligence emulators serving from this (test) process.

It yields once the GraphQL endpoint answers and the code location is loaded, and kills the
whole process group (webserver, daemon, code server, run workers) afterwards.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests
from psycopg import sql

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.urls import DAGSTER_URL_VARIABLE, with_driver
from morpheus_pipelines.demo import yesterday_cst
from morpheus_pipelines.demo_data import DemoDataset, generate_dataset
from morpheus_pipelines.emulators import DomainIntelEmulator, HubSpotEmulator
from morpheus_pipelines.source import SOURCE_COLUMNS, replace_source_tenants
from tests.support.databases import admin_url

PROJECT_ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 90.0
LOCATION_NAME = "morpheus_pipelines.definitions"

# Variables of the parent environment that must not leak into the Dagster processes: the test
# decides every setting of the product and of Dagster itself.
_SCRUBBED_PREFIXES = (
    "MORPHEUS_",
    "HUBSPOT_",
    "DOMAIN_INTELLIGENCE_",
    "APAC_SALES_EMAILS",
    "FORCED_SALES_OWNED_TENANT_IDS",
    "DAGSTER_",
)


class GraphQLError(AssertionError):
    pass


@dataclass
class DagsterUI:
    url: str
    process: subprocess.Popen
    log_path: Path
    dataset: DemoDataset
    partition_day: date
    warehouse_url: str
    dagster_database_url: str
    home: Path

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """POST a query to ``/graphql``; the ``data`` on success, a failed test otherwise."""
        response = requests.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables or {}},
            timeout=60,
        )
        try:
            body = response.json()
        except ValueError:
            raise GraphQLError(
                f"GraphQL HTTP {response.status_code}: {response.text[:2000]}"
            ) from None
        if response.status_code != 200 or body.get("errors"):
            raise GraphQLError(f"GraphQL HTTP {response.status_code}: {body.get('errors')}")
        return body["data"]

    def log_tail(self, lines: int = 120) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no dagster dev log)"
        return "\n".join(text.splitlines()[-lines:])

    def assert_alive(self) -> None:
        code = self.process.poll()
        if code is not None:
            pytest.fail(f"dagster dev exited with {code}:\n{self.log_tail()}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def empty_database(pg_server: EmbeddedPostgres) -> Iterator[str]:
    """A fresh database with no schema at all (for the Dagster instance storage, which runs
    its own migrations and must not find the warehouse's ``alembic_version``)."""
    name = f"dagster_ui_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield pg_server.status().url(name)
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def _load_source(url: str, dataset: DemoDataset) -> None:
    frame = dataset.tenants[list(SOURCE_COLUMNS)].astype(object)
    frame = frame.where(frame.notna(), None)
    replace_source_tenants(url, "devops", frame.itertuples(index=False, name=None))


def _child_environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED_PREFIXES)}
    # The child must import this checkout's package, whatever the current directory.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env.update(extra)
    return env


def _wait_until_ready(ui: DagsterUI) -> None:
    """Poll until the webserver answers and the code location is LOADED (no fixed sleeps)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    last: object = None
    while time.monotonic() < deadline:
        ui.assert_alive()
        try:
            if requests.get(f"{ui.url}/server_info", timeout=2).status_code == 200:
                data = ui.graphql(
                    """
                    query Locations {
                      workspaceOrError {
                        __typename
                        ... on Workspace {
                          locationEntries {
                            name
                            loadStatus
                            locationOrLoadError {
                              __typename
                              ... on PythonError { message stack }
                            }
                          }
                        }
                      }
                    }
                    """
                )
                entries = data["workspaceOrError"].get("locationEntries") or []
                last = entries
                for entry in entries:
                    error = entry["locationOrLoadError"]
                    if error and error["__typename"] == "PythonError":
                        pytest.fail(
                            f"code location {entry['name']} failed to load: {error['message']}\n"
                            + "".join(error["stack"])
                        )
                if entries and all(
                    e["loadStatus"] == "LOADED"
                    and (e["locationOrLoadError"] or {}).get("__typename") == "RepositoryLocation"
                    for e in entries
                ):
                    return
        except (requests.ConnectionError, requests.Timeout, GraphQLError) as exc:
            last = exc
        time.sleep(0.5)
    pytest.fail(
        f"dagster dev not ready after {STARTUP_TIMEOUT_S:.0f} s (last: {last!r}):\n" + ui.log_tail()
    )


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with_group = True
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        with_group = False
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    if with_group:
        # Whatever is left of the group (code server, run workers): no survivors.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@pytest.fixture
def dagster_ui(database_url: str, empty_database: str) -> Iterator[DagsterUI]:
    day = yesterday_cst()
    dataset = generate_dataset(tenants=300, companies=40, partition_day=day)
    _load_source(database_url, dataset)

    root = Path(tempfile.mkdtemp(prefix="morpheus-ui-test-"))
    dagster_home = root / "dagster_home"
    morpheus_home = root / "morpheus_home"
    dagster_home.mkdir()
    morpheus_home.mkdir()
    shutil.copyfile(PROJECT_ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    dagster_database_url = with_driver(empty_database, "psycopg2")
    port = free_port()
    log_path = root / "dagster_dev.log"

    with (
        HubSpotEmulator(dataset.hubspot_data()) as hubspot,
        DomainIntelEmulator(dataset.domain_intel) as domain_intel,
    ):
        env = _child_environment(
            {
                **dataset.environment(),
                "DAGSTER_HOME": str(dagster_home),
                "MORPHEUS_HOME": str(morpheus_home),
                "MORPHEUS_DATABASE_URL": database_url,
                DAGSTER_URL_VARIABLE: dagster_database_url,
                "HUBSPOT_BASE_URL": hubspot.base_url,
                "DOMAIN_INTELLIGENCE_BASE_URL": domain_intel.base_url,
                "HUBSPOT_REQUESTS_PER_10S": "1000",
            }
        )
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dagster",
                    "dev",
                    "-w",
                    str(PROJECT_ROOT / "workspace.yaml"),
                    "-p",
                    str(port),
                    "-h",
                    "127.0.0.1",
                ],
                cwd=root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        ui = DagsterUI(
            url=f"http://127.0.0.1:{port}",
            process=process,
            log_path=log_path,
            dataset=dataset,
            partition_day=day,
            warehouse_url=database_url,
            dagster_database_url=dagster_database_url,
            home=morpheus_home,
        )
        try:
            _wait_until_ready(ui)
            yield ui
        finally:
            _stop(process)
            shutil.rmtree(root, ignore_errors=True)
