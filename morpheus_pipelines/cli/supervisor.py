"""The process supervisor of ``morpheus dev``: run ``dagster dev`` and, however it ends, leave
none of the processes it started behind (psutil, so it works wherever psutil does)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import psutil

from morpheus_pipelines.db.dagster_home import PROJECT_ROOT

# `morpheus dev` must be gone within 10 s of SIGTERM or Ctrl-C: `dagster dev` and everything
# it started get this long to shut down cleanly (most of it the code server's), then whatever
# is left is killed.
SHUTDOWN_GRACE_SECONDS = 6.5
KILL_WAIT_SECONDS = 2.0


def run_dagster_dev(env: dict[str, str], *, host: str, port: int) -> int:
    """Run `dagster dev` (webserver + daemon + code server) until it exits, or until
    `morpheus dev` receives SIGTERM or SIGINT; then stop its whole process tree.

    `dagster dev` runs in its own session (so its own process group): Ctrl-C in the terminal
    reaches only `morpheus dev`, which then interrupts the group (what Ctrl-C does to a plain
    `dagster dev`), waits up to SHUTDOWN_GRACE_SECONDS, and SIGKILLs whatever survives: the
    group and every descendant recorded on the way (even one that left the group or was
    orphaned by its parent's exit)."""
    command = [sys.executable, "-m", "dagster", "dev", "-w", str(PROJECT_ROOT / "workspace.yaml")]
    command += ["-h", host, "-p", str(port)]
    received: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        received.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"Dagster UI on http://{host}:{port}  (DAGSTER_HOME={env['DAGSTER_HOME']})")
        child = subprocess.Popen(
            command,
            env=env,
            cwd=env["DAGSTER_HOME"],
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        tree = ProcessTree(child.pid)
        while not received and child.poll() is None:
            tree.refresh()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.5)
        if received:
            print(f"\n{signal.Signals(received[0]).name} received: stopping Dagster", flush=True)
        tree.stop(child)
        return 128 + received[0] if received else child.returncode
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


class ProcessTree:
    """The processes `dagster dev` started: its process group, plus every descendant ever
    seen. A process is held as a ``psutil.Process``, which knows its start time, so a pid
    reused by another process is never signalled."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, psutil.Process] = {}

    def refresh(self) -> None:
        """Record the group's members and the descendants of the root and of every process
        recorded (one pass over the process table; a recorded pid now another process's is
        not followed)."""
        current: dict[int, psutil.Process] = {}
        children: dict[int, list[psutil.Process]] = {}
        for process in psutil.process_iter(["ppid"]):
            current[process.pid] = process
            children.setdefault(process.info["ppid"], []).append(process)
            if process.pid not in self.seen and _group_of(process.pid) == self.root:
                self.seen[process.pid] = process
        stack = [pid for pid, process in self.seen.items() if current.get(pid) == process]
        stack += [] if self.root in self.seen else [self.root]
        while stack:
            for process in children.get(stack.pop(), ()):
                if process.pid not in self.seen:
                    self.seen[process.pid] = process
                    stack.append(process.pid)

    def running(self) -> list[psutil.Process]:
        """Recorded processes still running (a zombie has finished; a pid now another
        process's is not ours)."""
        alive = []
        for process in self.seen.values():
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(process)
            except psutil.NoSuchProcess:  # gone, or a zombie where psutil says so
                continue
            except psutil.AccessDenied:
                alive.append(process)
        return alive

    def _done(self, child: subprocess.Popen) -> bool:
        self.refresh()
        return child.poll() is not None and not self.running()

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.root, signum)
        self.refresh()
        for process in self.running():
            if _group_of(process.pid) != self.root:  # it left the group: signal it directly
                with contextlib.suppress(psutil.Error):
                    process.send_signal(signum)

    def _wait(self, child: subprocess.Popen, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self._done(child):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def stop(self, child: subprocess.Popen) -> None:
        """SIGINT to the group (Ctrl-C for a plain `dagster dev`), SIGKILL to whatever is
        left after the grace period, and wait until none of it runs."""
        if self._done(child):
            return
        self._signal(signal.SIGINT)
        if not self._wait(child, SHUTDOWN_GRACE_SECONDS):
            self.refresh()
            left = len(self.running())
            print(
                f"Dagster did not stop within {SHUTDOWN_GRACE_SECONDS} s: killing "
                f"{left or 'what is left of'} its processes",
                flush=True,
            )
            self._signal(signal.SIGKILL)
            self._wait(child, KILL_WAIT_SECONDS)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=KILL_WAIT_SECONDS)
