"""Lead intake under load: N concurrent clients over loopback against `morpheus serve` (its
own process) on the embedded Postgres. 20,000 leads plus 10 % duplicate retries, 50 reps in 5
pools. Prints latency percentiles, throughput, duplicates created, leads without an owner and
the spread of open load across reps; then the same run with the pool members looked up by a
live query per lead instead of the in-process cache, and the ratio; and where the CPU went
(load generator, service, PostgreSQL), per request.

With ``--compare availability`` the two passes are instead availability off (no rep has
working hours, a time zone or a cap) and on (every rep has working hours on every day in one
of several APAC time zones, and a cap the run never reaches, so the routing is the same and
the claim statement evaluates the whole check for every candidate), both with the cache.

    uv run python benchmarks/lead_intake.py [--leads 20000] [--clients 16]
        [--compare cache|availability]
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psutil
import psycopg
from _common import scratch_database
from end_to_end import python_yardstick

from morpheus_pipelines.crm.api.server import create_api_key
from morpheus_pipelines.crm.models import (
    RoutingPool,
    RoutingPoolMember,
    RoutingPoolRule,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.serve_process import morpheus_serve

POOLS = 5
REPS_PER_POOL = 10
SOURCES = [f"form-{i}" for i in range(POOLS)]
ZONES = ["Asia/Singapore", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "Asia/Manila"]
# Always inside: every day, split in two spans, so the day's spans are read and compared.
ALL_WEEK = {
    day: [["00:00", "12:00"], ["12:00", "24:00"]]
    for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
}


def seed(url: str, *, availability: bool = False) -> tuple[uuid.UUID, str]:
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(Subscription(id=subscription_id, name="Benchmark"))
        session.flush()
        for p in range(POOLS):
            pool = RoutingPool(subscriptionId=subscription_id, name=f"pool-{p}", isDefault=p == 0)
            session.add(pool)
            session.flush()
            session.add(
                RoutingPoolRule(subscriptionId=subscription_id, poolId=pool.id, source=SOURCES[p])
            )
            for r in range(REPS_PER_POOL):
                rep = SalesRep(
                    subscriptionId=subscription_id,
                    email=f"rep{p}-{r}@bench.example",
                    hubspotOwnerId=str(10_000 + p * 100 + r),
                )
                if availability:
                    rep.timeZone = ZONES[r % len(ZONES)]
                    rep.workingHours = ALL_WEEK
                    rep.maxOpenLeads = 1_000_000
                session.add(rep)
                session.flush()
                session.add(RoutingPoolMember(poolId=pool.id, salesRepId=rep.id))
    _, key = create_api_key(url, subscription_id, "benchmark")
    return subscription_id, key


@contextmanager
def service(url: str, *, owner_cache: bool, workers: int) -> Iterator[tuple[str, int]]:
    with morpheus_serve(
        url,
        workers=workers,
        owner_cache=owner_cache,
        environ={"MORPHEUS_INTAKE_REQUESTS_PER_MINUTE": "10000000"},
    ) as running:
        yield running


def workload(subscription_id: uuid.UUID, leads: int, seed_value: int) -> list[dict[str, Any]]:
    rng = random.Random(seed_value)
    bodies = [
        {
            "subscription_id": str(subscription_id),
            "source": rng.choice(SOURCES),
            "source_submission_id": f"sub-{i}",
            "campaign_ids": [],
            "contact": {"email": f"lead{i}@customer.example", "phone": f"+6591{i:06d}"},
        }
        for i in range(leads)
    ]
    retries = [bodies[rng.randrange(leads)] for _ in range(leads // 10)]
    sequence = bodies + retries
    rng.shuffle(sequence)
    return sequence


WARM_UP = 500  # requests before the clock starts: connections opened, caches filled


def run(base: str, key: str, sequence: list[dict[str, Any]], clients: int) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    cursor = iter(range(len(sequence)))
    start = threading.Barrier(clients + 1)

    host, port = base.removeprefix("http://").split(":")
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    payloads = [json.dumps(body).encode() for body in sequence]

    def worker() -> None:
        # http.client on a kept-alive connection: the client's own cost per request is a
        # fraction of `requests`', so the figures are the service's, not the load generator's.
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        mine, codes = [], {}
        start.wait()
        while True:
            with lock:
                index = next(cursor, None)
            if index is None:
                break
            t0 = time.perf_counter()
            connection.request("POST", "/v1/leads", body=payloads[index], headers=headers)
            answer = connection.getresponse()
            answer.read()
            mine.append(time.perf_counter() - t0)
            codes[answer.status] = codes.get(answer.status, 0) + 1
        connection.close()
        with lock:
            latencies.extend(mine)
            for code, n in codes.items():
                statuses[code] = statuses.get(code, 0) + n

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    quantiles = statistics.quantiles(latencies, n=100)
    return {
        "requests": len(latencies),
        "seconds": elapsed,
        "throughput": len(latencies) / elapsed,
        "p50_ms": quantiles[49] * 1000,
        "p95_ms": quantiles[94] * 1000,
        "p99_ms": quantiles[98] * 1000,
        "statuses": statuses,
    }


def own_cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def tree_cpu(root: psutil.Process) -> float:
    """CPU seconds of ``root``, its live descendants and the children it has reaped (a
    PostgreSQL backend that ended during the run still counts, through its postmaster)."""
    times = root.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in root.children(recursive=True):
        try:
            total += own_cpu(child)
        except psutil.Error:  # ended meanwhile: its parent has (or will have) reaped it
            continue
    return total


def cpu_meters(service_pid: int, url: str) -> dict[str, Callable[[], float]]:
    """What a request costs in CPU, per party: this process (the load generator), the service
    (its workers), and the scratch database's own PostgreSQL server (not other servers)."""
    with psycopg.connect(libpq_url(url)) as conn:
        backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        # While the connection is open: its backend exits when it closes.
        postmaster = psutil.Process(backend).parent()
    me, service = psutil.Process(), psutil.Process(service_pid)
    return {
        "load generator": lambda: own_cpu(me),
        "service": lambda: tree_cpu(service),
        "PostgreSQL": lambda: tree_cpu(postmaster),
    }


def outcome(url: str, subscription_id: uuid.UUID, unique: int) -> dict[str, Any]:
    libpq = libpq_url(url)
    with psycopg.connect(libpq) as conn:
        leads = conn.execute(
            'SELECT count(*) FROM leads WHERE "subscriptionId" = %s', (subscription_id,)
        ).fetchone()[0]
        ownerless = conn.execute(
            'SELECT count(*) FROM leads WHERE "subscriptionId" = %s '
            'AND ("ownerHubspotOwnerId" IS NULL OR "ownerHubspotOwnerId" = \'\')',
            (subscription_id,),
        ).fetchone()[0]
        per_pool = conn.execute(
            """
            SELECT m."poolId", array_agg(r."openLeads" ORDER BY r.id)
            FROM routing_pool_members m JOIN sales_reps r ON r.id = m."salesRepId"
            WHERE r."subscriptionId" = %s GROUP BY m."poolId" ORDER BY 1
            """,
            (subscription_id,),
        ).fetchall()
    spreads = [max(loads) - min(loads) for _, loads in per_pool]
    return {
        "leads": leads,
        "duplicates_created": leads - unique,
        "leads_without_owner": ownerless,
        "max_load_spread_in_a_pool": max(spreads),
        "perfect_spread": 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leads", type=int, default=20_000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="morpheus serve --workers")
    parser.add_argument(
        "--compare",
        choices=("cache", "availability"),
        default="cache",
        help="cache: the owner cache against a live query per lead; availability: working "
        "hours and caps off against on (both with the cache)",
    )
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    passes = (
        (("cache", True, False), ("live query", False, False))
        if args.compare == "cache"
        else (("off", True, False), ("on", True, True))
    )
    results = {}
    for label, owner_cache, availability in passes:
        with scratch_database() as url:
            subscription_id, key = seed(url, availability=availability)
            sequence = workload(subscription_id, args.leads, 7)
            warm_up = [
                body | {"source_submission_id": f"warm-up-{i}"}
                for i, body in enumerate(sequence[:WARM_UP])
            ]
            with service(url, owner_cache=owner_cache, workers=args.workers) as (base, pid):
                run(base, key, warm_up, args.clients)
                meters = cpu_meters(pid, url)
                before = {name: meter() for name, meter in meters.items()}
                measured = run(base, key, sequence, args.clients)
                cpu_us = {
                    name: (meter() - before[name]) / measured["requests"] * 1e6
                    for name, meter in meters.items()
                }
            measured |= outcome(url, subscription_id, args.leads + len(warm_up))
        results[label] = measured
        print(
            f"{label:>10}: {measured['requests']:,} requests in {measured['seconds']:.1f} s "
            f"= {measured['throughput']:,.0f}/s; p50 {measured['p50_ms']:.1f} ms, "
            f"p95 {measured['p95_ms']:.1f} ms, p99 {measured['p99_ms']:.1f} ms; "
            f"statuses {measured['statuses']}; leads {measured['leads']:,}, duplicates "
            f"created {measured['duplicates_created']}, without owner "
            f"{measured['leads_without_owner']}, max open-load spread in a pool "
            f"{measured['max_load_spread_in_a_pool']} (perfect: {measured['perfect_spread']})"
        )
        print(
            f"{'':>10}  CPU per request: "
            + ", ".join(f"{name} {us:,.0f} µs" for name, us in cpu_us.items())
        )
    if args.compare == "availability":
        off, on = results["off"], results["on"]
        print(
            f"availability on / off: p50 {on['p50_ms'] / off['p50_ms']:.2f}x, "
            f"p99 {on['p99_ms'] / off['p99_ms']:.2f}x, throughput "
            f"{on['throughput'] / off['throughput']:.2f}x (target: p99 at most 1.10x)"
        )
    else:
        cache, live = results["cache"], results["live query"]
        print(
            f"live query / cache: p50 {live['p50_ms'] / cache['p50_ms']:.2f}x, "
            f"p99 {live['p99_ms'] / cache['p99_ms']:.2f}x, throughput "
            f"{cache['throughput'] / live['throughput']:.2f}x in the cache's favour"
        )
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
