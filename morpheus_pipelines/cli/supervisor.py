"""The process supervisor of ``morpheus dev``: run ``dagster dev`` and, however it ends, leave
none of the processes it started behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

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


class ProcessTree:
    """The processes `dagster dev` started: its process group, plus (where ``/proc`` exists)
    every descendant ever seen, identified by pid and start time so that a reused pid is
    never signalled."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, str] = {}  # pid → start time

    def refresh(self) -> dict[int, tuple[int, int, str, str]]:
        """Record the group's members and the root's descendants; the ``/proc`` table read."""
        table = _proc_table()
        children: dict[int, list[int]] = {}
        for pid, (ppid, pgid, start, _state) in table.items():
            children.setdefault(ppid, []).append(pid)
            if pgid == self.root:
                self.seen.setdefault(pid, start)
        stack = [self.root, *self.seen]
        while stack:
            for pid in children.get(stack.pop(), ()):
                if pid not in self.seen:
                    self.seen[pid] = table[pid][2]
                    stack.append(pid)
        return table

    def running(self, table: dict[int, tuple[int, int, str, str]]) -> list[int]:
        """Recorded processes still running (a zombie has finished; a pid whose start time
        changed is another process)."""
        return [
            pid
            for pid, start in self.seen.items()
            if pid in table and table[pid][2] == start and table[pid][3] != "Z"
        ]

    def _group_exists(self) -> bool:
        try:
            os.killpg(self.root, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def _done(self, child) -> bool:
        table = self.refresh()
        if child.poll() is None:
            return False
        # Without /proc the process group is all there is to go by.
        return not self.running(table) if table else not self._group_exists()

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.root, signum)
        table = self.refresh()
        for pid in self.running(table):
            if table[pid][1] != self.root:  # it left the group: signal it directly
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signum)

    def _wait(self, child, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self._done(child):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def stop(self, child) -> None:
        """SIGINT to the group (Ctrl-C for a plain `dagster dev`), SIGKILL to whatever is
        left after the grace period, and wait until none of it runs."""
        if self._done(child):
            return
        self._signal(signal.SIGINT)
        if not self._wait(child, SHUTDOWN_GRACE_SECONDS):
            left = len(self.running(self.refresh()))
            print(
                f"Dagster did not stop within {SHUTDOWN_GRACE_SECONDS} s: killing "
                f"{left or 'what is left of'} its processes",
                flush=True,
            )
            self._signal(signal.SIGKILL)
            self._wait(child, KILL_WAIT_SECONDS)
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=KILL_WAIT_SECONDS)


def _proc_table() -> dict[int, tuple[int, int, str, str]]:
    """pid → (parent pid, process group, start time, state) from ``/proc``; empty where
    there is no ``/proc`` (the process group is then all `morpheus dev` stops)."""
    table: dict[int, tuple[int, int, str, str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name (field 2) may hold spaces and parentheses: split after the last ")".
        fields = stat[stat.rindex(")") + 2 :].split()
        table[int(name)] = (int(fields[1]), int(fields[2]), fields[19], fields[0])
    return table
