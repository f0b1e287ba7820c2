"""Lead intake against a real load generator, beside the floor endpoint, in one run.

`morpheus serve` (2 workers, the budget lifted, ``MORPHEUS_INTAKE_BENCHMARK_FLOOR=1``) on a
scratch database seeded as ``lead_intake.py`` seeds it (50 reps in 5 pools). Every request
is a new lead (a submission id no other request of the run has):

* closed loop with ``wrk`` (Debian's package; ``benchmarks/lead_intake.lua`` makes the
  bodies) over kept-alive connections, at 4 and 16 connections, for ``POST /v1/leads`` and
  for ``POST /benchmark/floor`` (one ``INSERT … RETURNING`` and commit the way the usual
  lead's statement goes, no key, budget, validation or routing), each with CPU per
  request by process; the lead p99 / floor p99 ratio at 16 connections;
* ``GET /healthz`` alone at 1 connection, and at 1 connection while 16 connections post
  leads;
* open loop: leads sent on a fixed timetable (``--rate`` a second) by this process, each
  request's latency counted from the moment it was due, not from when it was sent, so a
  slow answer cannot hold the next sends back and hide its own cost (no coordinated
  omission); a request finds a free kept-alive connection or opens one. The same for the
  floor.

    uv run python benchmarks/lead_intake_wrk.py [--seconds 15] [--rate 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import time
import uuid
from collections import deque
from pathlib import Path
from typing import Any

import psutil
import psycopg
from _common import scratch_database
from end_to_end import python_yardstick
from lead_intake import SOURCES, cpu_meters, seed

from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.serve_process import morpheus_serve

try:
    from morpheus_pipelines.crm.api.floor import FLOOR_PATH, FLOOR_TABLE_DDL
except ImportError:  # a checkout from before the floor, measured for a before/after
    FLOOR_PATH, FLOOR_TABLE_DDL = None, None

SCRIPT = Path(__file__).with_name("lead_intake.lua")
LEADS = "/v1/leads"


def wrk(
    base: str, key: str, subscription: uuid.UUID, path: str, connections: int, seconds: int
) -> dict[str, Any]:
    """One closed-loop ``wrk`` run: its JSON line (latency in ms)."""
    env = os.environ | {
        "LEAD_KEY": key,
        "LEAD_SUBSCRIPTION": str(subscription),
        "LEAD_RUN": uuid.uuid4().hex[:8],
        "LEAD_PATH": path,
    }
    threads = min(2, connections)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", str(SCRIPT)]
    out = subprocess.run(
        [*command, "--timeout", "10s", base], env=env, capture_output=True, text=True, check=True
    ).stdout
    line = next(line for line in out.splitlines() if line.startswith("WRK "))
    result = json.loads(line.removeprefix("WRK "))
    result["throughput"] = result["requests"] / result["seconds"]
    return result


def measured_wrk(meters: dict[str, Any], *args: Any) -> tuple[dict[str, Any], dict[str, float]]:
    """``wrk(*args)`` and the CPU each process spent per request (the load generator is wrk),
    and what the rest of the machine spent meanwhile ("other work": the machine is shared)."""
    before = {name: meter() for name, meter in meters.items()}
    wrk_cpu = psutil.Process().cpu_times()
    started = wrk_cpu.children_user + wrk_cpu.children_system
    machine = _busy_seconds()
    result = wrk(*args)
    machine = _busy_seconds() - machine
    wrk_cpu = psutil.Process().cpu_times()
    used = {name: meter() - before[name] for name, meter in meters.items()}
    used["wrk"] = wrk_cpu.children_user + wrk_cpu.children_system - started
    used["other work"] = machine - sum(used.values())  # this process's own share included
    used.pop("load generator", None)
    return result, {name: s / result["requests"] * 1e6 for name, s in used.items()}


def _busy_seconds() -> float:
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def lead_body(subscription: uuid.UUID, run: str, n: int) -> bytes:
    return json.dumps(
        {
            "subscription_id": str(subscription),
            "source": SOURCES[n % len(SOURCES)],
            "source_submission_id": f"open-{run}-{n}",
            "campaign_ids": [],
            "contact": {"email": f"open-{run}-{n}@customer.example", "phone": f"+6592{n:06d}"},
        }
    ).encode()


async def open_loop(
    base: str, key: str, subscription: uuid.UUID, path: str, rate: float, seconds: float
) -> dict[str, Any]:
    """``rate`` requests a second for ``seconds``, each due at its time on the timetable; its
    latency is from when it was due to the end of its answer."""
    host, port = base.removeprefix("http://").split(":")
    run = uuid.uuid4().hex[:8]
    idle: deque[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = deque()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    opened = 0

    async def send(n: int, due: float) -> None:
        nonlocal opened
        body = lead_body(subscription, run, n)
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        status_line = b""
        while not status_line:
            if idle:
                reader, writer = idle.pop()
            else:
                reader, writer = await asyncio.open_connection(host, int(port))
                opened += 1
            writer.write(head + body)
            # Empty: the server closed a connection idle past its keep-alive timeout before
            # reading this request; it is sent again on another (its clock keeps running).
            status_line = await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await reader.readexactly(length)
        latencies.append(time.perf_counter() - due)
        status = int(status_line.split()[1])
        statuses[status] = statuses.get(status, 0) + 1
        idle.append((reader, writer))

    total = int(rate * seconds)
    start = time.perf_counter() + 0.1
    tasks = []
    for n in range(total):
        due = start + n / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(send(n, due)))
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    for _, writer in idle:
        writer.close()
    quantiles = statistics.quantiles(latencies, n=100)
    return {
        "requests": len(latencies),
        "throughput": len(latencies) / elapsed,
        "p50_ms": quantiles[49] * 1000,
        "p99_ms": quantiles[98] * 1000,
        "max_ms": max(latencies) * 1000,
        "connections": opened,
        "statuses": statuses,
    }


def healthz_under_load(
    base: str, key: str, subscription: uuid.UUID, seconds: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``/healthz`` at 1 connection while 16 connections post leads (a second longer each
    side, so the probe never runs alone)."""
    env = os.environ | {
        "LEAD_KEY": key,
        "LEAD_SUBSCRIPTION": str(subscription),
        "LEAD_RUN": uuid.uuid4().hex[:8],
        "LEAD_PATH": LEADS,
    }
    load = subprocess.Popen(
        ["wrk", "-t2", "-c16", f"-d{seconds + 2}s", "-s", str(SCRIPT), base],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(1)  # the load's connections open first; nothing to synchronise on
    probe = wrk(base, key, subscription, "/healthz", 1, seconds)
    out, _ = load.communicate(timeout=seconds + 30)
    line = next(line for line in out.splitlines() if line.startswith("WRK "))
    return probe, json.loads(line.removeprefix("WRK "))


def show(label: str, result: dict[str, Any], cpu: dict[str, float] | None = None) -> None:
    line = (
        f"{label:>34}: {result['throughput']:7,.0f}/s  p50 {result['p50_ms']:7.2f} ms  "
        f"p99 {result['p99_ms']:7.2f} ms  max {result['max_ms']:7.1f} ms  "
        f"statuses {result['statuses']}"
    )
    if result.get("errors"):
        line += f"  errors {result['errors']}"
    if cpu:
        line += (
            "\n"
            + " " * 36
            + "CPU per request: "
            + ", ".join(f"{name} {us:,.0f} µs" for name, us in cpu.items())
        )
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=15, help="each closed-loop run")
    parser.add_argument("--rate", type=float, default=200.0, help="open loop, requests a second")
    parser.add_argument("--workers", type=int, default=2, help="morpheus serve --workers")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    with scratch_database() as url:
        subscription, key = seed(url)
        if FLOOR_TABLE_DDL is not None:
            with psycopg.connect(libpq_url(url), autocommit=True) as conn:
                conn.execute(FLOOR_TABLE_DDL)
        environ = {
            "MORPHEUS_INTAKE_REQUESTS_PER_MINUTE": "10000000",
            "MORPHEUS_INTAKE_BENCHMARK_FLOOR": "1",
        }
        with morpheus_serve(url, workers=args.workers, environ=environ) as (base, pid):
            meters = cpu_meters(pid, url)
            paths = (LEADS, FLOOR_PATH) if FLOOR_PATH else (LEADS,)
            for path in paths:  # connections opened, caches filled
                wrk(base, key, subscription, path, 16, 3)
            closed: dict[tuple[str, int], dict[str, Any]] = {}
            for connections in (4, 16):
                for path in paths:
                    result, cpu = measured_wrk(
                        meters, base, key, subscription, path, connections, args.seconds
                    )
                    closed[path, connections] = result
                    show(f"wrk {path} at {connections} connections", result, cpu)
            alone = wrk(base, key, subscription, "/healthz", 1, 5)
            show("/healthz alone, 1 connection", alone)
            probe, load = healthz_under_load(base, key, subscription, args.seconds)
            show("/healthz beside 16 lead connections", probe)
            load["throughput"] = load["requests"] / load["seconds"]
            show("  the leads meanwhile", load)
            for path in paths:
                result = asyncio.run(
                    open_loop(base, key, subscription, path, args.rate, args.seconds)
                )
                show(f"open loop {path} at {args.rate:.0f}/s", result)
                print(" " * 36 + f"connections opened: {result['connections']}")
    lead = closed[LEADS, 16]
    if FLOOR_PATH:
        floor = closed[FLOOR_PATH, 16]
        ratio = lead["p99_ms"] / floor["p99_ms"]
        print(f"lead p99 / floor p99 at 16 connections: {ratio:.2f} (goal at most 1.5)")
    print(f"leads/s at 16 connections: {lead['throughput']:,.0f} (goal at least 1,000)")
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
