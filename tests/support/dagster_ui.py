"""Driving the real Dagster webserver and daemon (``dagster dev``) from a test: the handle the
``dagster_ui`` fixture (``tests/ui/conftest.py``) yields, and the steps that start and stop it.

:class:`DagsterUI` talks GraphQL to the running server; :func:`child_environment` is the
environment of the ``dagster dev`` process (nothing of the parent's product or Dagster
settings leaks in); :func:`wait_until_ready` polls until the code location is loaded and
:func:`stop_process_group` kills the whole process group (webserver, daemon, code server, run
workers).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import requests

from morpheus_pipelines.devtools.demo.dataset import DemoDataset
from morpheus_pipelines.devtools.source import SOURCE_COLUMNS, replace_source_tenants

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


def load_demo_source(url: str, dataset: DemoDataset) -> None:
    frame = dataset.tenants[list(SOURCE_COLUMNS)].astype(object)
    frame = frame.where(frame.notna(), None)
    replace_source_tenants(url, "devops", frame.itertuples(index=False, name=None))


def child_environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED_PREFIXES)}
    # The child must import this checkout's package, whatever the current directory.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env.update(extra)
    return env


def wait_until_ready(ui: DagsterUI) -> None:
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


def stop_process_group(process: subprocess.Popen) -> None:
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
