"""Shared benchmark plumbing: a scratch, migrated database on the embedded default."""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.session import dispose_engines
from morpheus_pipelines.platform.settings import load_settings


def best_of_three(call: Callable[[], object]) -> float:
    """The fastest of three runs of ``call``, in seconds."""
    seconds = []
    for _ in range(3):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return min(seconds)


def send_concurrently(
    items: Sequence[Any], clients: int, send: Callable[[Any], Any], ok: Collection[int] = (200,)
) -> tuple[float, list[float]]:
    """``send(item)`` for every item from ``clients`` threads, each taking the next item:
    the wall seconds and each call's seconds. Exits naming the first answer whose status is
    not in ``ok``."""
    latencies: list[float] = []
    failures: list[str] = []
    queue = list(reversed(items))
    lock = threading.Lock()

    def client() -> None:
        while True:
            with lock:
                if not queue:
                    return
                item = queue.pop()
            started = time.perf_counter()
            answer = send(item)
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                if answer.status_code not in ok:
                    failures.append(f"{answer.status_code} {answer.text[:200]}")

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    if failures:
        raise SystemExit(f"{len(failures)} requests refused, first: {failures[0]}")
    return wall, latencies


@contextlib.contextmanager
def scratch_database() -> Iterator[str]:
    """A fresh migrated database on the embedded server (MORPHEUS_HOME), dropped afterwards."""
    if os.environ.get("MORPHEUS_DATABASE_URL"):
        raise SystemExit(
            "benchmarks create scratch databases on the embedded server; "
            "unset MORPHEUS_DATABASE_URL"
        )
    status = EmbeddedPostgres(load_settings().home).start()
    name = f"bench_{uuid.uuid4().hex[:8]}"
    admin = status.url("postgres").replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = status.url(name)
    try:
        upgrade(url)
        yield url
    finally:
        dispose_engines()
        if os.environ.get("BENCH_KEEP_DATABASE"):  # to EXPLAIN a statement on the data after
            print(f"kept database {url}")
        else:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@contextlib.contextmanager
def scratch_event_files(days: Sequence[str]) -> Iterator[None]:
    """The per-tenant event files of ``days`` under ``$MORPHEUS_HOME/reports`` are the run's
    own: a run at 1,000,000 tenants appends gigabytes a day to them, which would pile up run
    after run. Files already there are set aside and put back afterwards; the run's are
    removed. (Written in place, as by default, so publishing them copies nothing.)"""
    folder = Path(load_settings().home) / "reports" / "tenant_events"
    files = [folder / f"{day}.jsonl" for day in days]
    aside = {path: path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}") for path in files}
    for path, kept in aside.items():
        if path.exists():
            path.rename(kept)
    try:
        yield
    finally:
        for path, kept in aside.items():
            path.unlink(missing_ok=True)
            if kept.exists():
                kept.rename(path)


@contextlib.contextmanager
def emulator_process(service: str, data: dict[str, Any]) -> Iterator[str]:
    """Serve ``data`` with ``morpheus emulate <service>`` in its own process; yields the base
    URL.

    A real service does not share the pipeline's interpreter: in-process, the emulator's
    request handling would compete with the pipeline for the GIL and be counted as its time.
    """
    with (
        tempfile.TemporaryDirectory() as scratch,
        open(Path(scratch) / "data.json", "w") as handle,
    ):
        json.dump(data, handle)
        handle.close()
        with subprocess.Popen(
            [
                sys.executable,
                "-m",
                "morpheus_pipelines.cli",
                "emulate",
                service,
                "--data",
                handle.name,
            ],
            stdout=subprocess.PIPE,
            text=True,
        ) as server:
            try:
                assert server.stdout is not None
                url = server.stdout.readline().strip()  # the first line is the base URL
                if not url.startswith("http"):
                    raise SystemExit(f"the {service} emulator did not start (exit {server.wait()})")
                yield url
            finally:
                server.terminate()
                try:
                    server.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    server.kill()


@contextlib.contextmanager
def timed(label: str, results: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    yield
    results[label] = time.perf_counter() - start


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def largest_imports(
    statement: str, count: int = 6, env: dict[str, str] | None = None
) -> list[tuple[str, float]]:
    """The top-level packages that ``statement`` imports in a fresh interpreter, by the
    cumulative seconds of each one's own line in ``-X importtime`` (at whatever depth it was
    first imported), largest first; the project's own package left out."""
    trace = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stderr
    cumulative: Counter[str] = Counter()
    for line in trace.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| +(\S+)$", line)
        if match and "." not in match.group(2) and match.group(2) != "morpheus_pipelines":
            cumulative[match.group(2)] = max(cumulative[match.group(2)], int(match.group(1)) / 1e6)
    return cumulative.most_common(count)
