"""Separate hosts on one machine: one Linux network namespace per host (docs/multi-host.md).

:class:`Network` makes a bridge in the root namespace with the first address of a private
/24, and for each host a namespace with its own address on a veth pair plugged into the
bridge (``lo`` up too, so a host's own loopback works). A process started with
:meth:`Host.spawn` runs through ``ip netns exec``: it sees only its host's interfaces, and
reaches another host only over the bridge, by address, as it would over a LAN. The root
namespace (the operator, the test) reaches every host through the bridge's address.

:meth:`Network.close` kills every process left in each namespace (spawned or not: a
``pg_ctl``-started PostgreSQL is not a child), then deletes the namespaces (their veth ends
go with them) and the bridge. Needs root (``CAP_NET_ADMIN``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


class HostsError(RuntimeError):
    """The namespaces could not be made, or a process in them did not start."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise HostsError(f"ip {' '.join(args)}: {result.stderr.strip()}")
    return result


def namespace_pids(namespace: str) -> list[int]:
    """Every process whose network namespace is ``namespace``."""
    result = _ip("netns", "pids", namespace, check=False)
    return [int(p) for p in result.stdout.split()] if result.returncode == 0 else []


def namespaces() -> set[str]:
    return {line.split()[0] for line in _ip("netns", "list").stdout.splitlines() if line.strip()}


def link_exists(name: str) -> bool:
    return _ip("link", "show", name, check=False).returncode == 0


@dataclass
class Process:
    """A process started in a host: its ``Popen`` and its log file."""

    name: str
    popen: subprocess.Popen
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """``sig`` to the process and everything it started (its own session)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)
        self.popen.wait(timeout=30)

    def stop(self, timeout: float = 20) -> None:
        """SIGTERM, then SIGKILL for whatever of its session is left after ``timeout``."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=30)


@dataclass
class Host:
    """One namespace with one address on the bridge."""

    name: str
    namespace: str
    address: str
    logs: Path
    processes: list[Process] = field(default_factory=list)

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` as run inside this host."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def run(
        self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess:
        """Run ``argv`` in this host to completion; raises with its output if it fails."""
        result = subprocess.run(
            self.command(argv), env=env, capture_output=True, text=True, timeout=timeout
        )
        if result.returncode != 0:
            raise HostsError(
                f"{self.name}: {' '.join(argv)} exited {result.returncode}:\n"
                f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
            )
        return result

    def spawn(self, name: str, argv: Sequence[str], *, env: Mapping[str, str]) -> Process:
        """Start ``argv`` in this host, in a session of its own, output to ``<name>.log``."""
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{self.name}-{name}.log"
        with open(log, "ab") as handle:
            popen = subprocess.Popen(
                self.command(argv),
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def kill_all(self) -> None:
        """Every process of the namespace killed, the spawned ones and any other."""
        for process in self.processes:
            process.stop(timeout=10)
        deadline = time.monotonic() + 30
        while pids := namespace_pids(self.namespace):
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                raise HostsError(f"{self.name}: processes {pids} survived SIGKILL")
            time.sleep(0.05)


class Network:
    """A bridge and one namespace per host on ``subnet`` (a /24 of private addresses)."""

    def __init__(self, prefix: str, subnet: str, logs: Path) -> None:
        self.prefix = prefix
        self.subnet = ipaddress.ip_network(subnet)
        self.bridge = f"{prefix}br0"
        self.logs = logs
        hosts = self.subnet.hosts()
        self.gateway = str(next(hosts))  # the bridge's own address: the root namespace
        self._addresses = hosts
        self.hosts: dict[str, Host] = {}

    def open(self) -> Network:
        if len(self.bridge) > 15:
            raise HostsError(f"interface name {self.bridge} is longer than 15 characters")
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/{self.subnet.prefixlen}", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        return self

    def add_host(self, name: str) -> Host:
        namespace = f"{self.prefix}-{name}"
        outside = f"{self.prefix}-{name}"[:15]
        address = str(next(self._addresses))
        _ip("netns", "add", namespace)
        host = Host(name, namespace, address, self.logs)
        self.hosts[name] = host
        _ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", namespace)
        _ip("link", "set", outside, "master", self.bridge)
        _ip("link", "set", outside, "up")
        inside = ["netns", "exec", namespace, "ip"]
        _ip(*inside, "addr", "add", f"{address}/{self.subnet.prefixlen}", "dev", "eth0")
        _ip(*inside, "link", "set", "eth0", "up")
        _ip(*inside, "link", "set", "lo", "up")
        return host

    def close(self) -> None:
        """Kill every process in the hosts, delete the namespaces and the bridge. Each step
        runs even when one before it failed; the first failure is raised at the end."""
        errors: list[BaseException] = []
        for host in self.hosts.values():
            try:
                host.kill_all()
            except Exception as error:
                errors.append(error)
        for host in self.hosts.values():
            if host.namespace in namespaces():
                try:
                    _ip("netns", "del", host.namespace)
                except HostsError as error:
                    errors.append(error)
        for host in self.hosts.values():
            outside = host.namespace[:15]
            if link_exists(outside):  # normally gone with its namespace
                with contextlib.suppress(HostsError):
                    _ip("link", "del", outside)
        if link_exists(self.bridge):
            try:
                _ip("link", "del", self.bridge)
            except HostsError as error:
                errors.append(error)
        if errors:
            raise errors[0]

    def leftovers(self) -> list[str]:
        """What of this network still exists (empty after :meth:`close`)."""
        left = [
            f"namespace {h.namespace}" for h in self.hosts.values() if h.namespace in namespaces()
        ]
        left += [f"link {self.bridge}"] if link_exists(self.bridge) else []
        left += [
            f"link {h.namespace[:15]}" for h in self.hosts.values() if link_exists(h.namespace[:15])
        ]
        left += [
            f"pid {p.pid} ({p.name})" for h in self.hosts.values() for p in h.processes if p.alive()
        ]
        return left


@contextlib.contextmanager
def terminated_as_exit() -> Iterator[None]:
    """SIGTERM raises ``SystemExit`` meanwhile (in the main thread), so the ``finally``
    blocks that tear hosts down run when the harness is stopped like any process."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def exit_(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, exit_)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def network(prefix: str, subnet: str, logs: Path, hosts: Sequence[str]) -> Iterator[Network]:
    """A :class:`Network` with ``hosts``, torn down on exit whatever happened."""
    net = Network(prefix, subnet, logs)
    with terminated_as_exit(), contextlib.ExitStack() as stack:
        stack.callback(net.close)
        net.open()
        for name in hosts:
            net.add_host(name)
        yield net


def wait_until(predicate, *, timeout: float, what: str, interval: float = 0.2):
    """Poll ``predicate`` until it returns something truthy (returned) or ``timeout`` passes
    (``TimeoutError`` naming ``what`` and the last exception, if any)."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:
            last = error
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{what} after {timeout:.0f} s" + (f" (last: {last!r})" if last else "")
            )
        time.sleep(interval)
