"""An emulator served by a process of its own, as ``morpheus emulate`` runs one."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["serving"]


@contextmanager
def serving(cmd: list[str]) -> Iterator[str]:
    """Run ``cmd``, yield the base URL it prints first, then SIGTERM it and expect exit 0."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().strip()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
