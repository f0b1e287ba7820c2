"""``morpheus serve`` as a child process on a free loopback port, for the tests and the
benchmarks that need the real server (its worker processes and its uvicorn options)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import requests


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def morpheus_serve(
    database_url: str,
    *,
    workers: int = 1,
    owner_cache: bool = True,
    environ: Mapping[str, str] | None = None,
    start_timeout: float = 90.0,
) -> Iterator[tuple[str, int]]:
    """Start ``morpheus serve`` on ``database_url``; yields ``(base URL, pid)`` once it
    answers ``/healthz``, and stops it on exit."""
    port = free_port()
    command = [sys.executable, "-m", "morpheus_pipelines.cli", "serve", "--port", str(port)]
    command += ["--workers", str(workers)]
    if not owner_cache:
        command.append("--no-owner-cache")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MORPHEUS_")}
    env |= {"MORPHEUS_DATABASE_URL": database_url, **(environ or {})}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:  # started when it answers
            try:
                if requests.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("morpheus serve did not start")
            time.sleep(0.1)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)
