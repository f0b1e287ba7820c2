"""What the shared request budget costs a request (docs/decisions/0049).

1. ``SharedBudget.take`` alone, on the embedded PostgreSQL, on an event loop as the service
   takes it: one taker on one key, then 8 at once on one key (every take queues on the same
   row) and 8 on 8 keys.
2. A keep-alive client reading one lead, ``GET /v1/leads/{id}`` against the app under uvicorn
   in this process, with the key's budget shared (the service as it is) and, for the
   baseline, counted in the process's memory as before; the difference is what a request
   pays for sharing.

    uv run python benchmarks/request_budget.py [--takes 5000] [--requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from typing import Any

import requests
from _common import scratch_database

from morpheus_pipelines.crm.api.app import create_app
from morpheus_pipelines.crm.api.budget import KEY_POLICY, RequestBudget, SharedBudget
from morpheus_pipelines.crm.api.server import create_api_key
from morpheus_pipelines.crm.api.settings import IntakeSettings
from morpheus_pipelines.crm.models import SalesRep, Subscription
from morpheus_pipelines.crm.rules.request_budget import BudgetPolicy
from morpheus_pipelines.db.autocommit import AutocommitConnections
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.demo.intake import serving_in_thread

POLICY = BudgetPolicy(KEY_POLICY, 10_000_000)  # never refuses: the cost, not the limit


def takes(url: str, count: int, takers: int, keys: int) -> tuple[float, float]:
    """Microseconds per take, wall clock and this process's CPU, ``takers`` concurrent tasks
    over ``keys`` keys on ``takers`` connections."""
    per_taker = count // takers

    async def run() -> tuple[float, float]:
        connections = AutocommitConnections(
            libpq_url(url), size=takers, options="-c synchronous_commit=off"
        )
        budget = SharedBudget(connections, POLICY)
        await budget.take("warm-up")

        async def taker(index: int) -> None:
            key = f"k{index % keys}"
            for _ in range(per_taker):
                await budget.take(key)

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(taker(i) for i in range(takers)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        await connections.close()
        return elapsed, cpu

    elapsed, cpu = asyncio.run(run())
    total = per_taker * takers
    return elapsed / total * 1e6, cpu / total * 1e6


class _LocalBudget:
    """The baseline: the key's budget in this process's memory, as before it was shared."""

    def __init__(self) -> None:
        self._bucket = RequestBudget(POLICY.quota, name=KEY_POLICY)
        self.policy = self._bucket.policy

    async def take(self, key: str) -> Any:
        self._bucket.take(key)
        return self._bucket.allowance(key)


def requests_ms(url: str, count: int, *, shared: bool) -> list[float]:
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(Subscription(id=subscription_id, name="Budget benchmark"))
        session.flush()
        session.add(
            SalesRep(subscriptionId=subscription_id, email="r@b.example", hubspotOwnerId="1")
        )
    _, key = create_api_key(url, subscription_id, "bench")
    app = create_app(IntakeSettings(database_url=url, requests_per_minute=POLICY.quota))
    if not shared:
        app.state.intake.budget = _LocalBudget()
    with serving_in_thread(app) as base:
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {key}"
        lead = http.post(
            f"{base}/v1/leads",
            json={
                "subscription_id": str(subscription_id),
                "source": "bench",
                "source_submission_id": f"b-{shared}",
                "contact": {"email": "a@b.example"},
            },
        ).json()["lead_id"]
        for _ in range(200):  # warm up
            http.get(f"{base}/v1/leads/{lead}")
        latencies = []
        for _ in range(count):
            started = time.perf_counter()
            assert http.get(f"{base}/v1/leads/{lead}").status_code == 200
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--takes", type=int, default=5_000)
    parser.add_argument("--requests", type=int, default=3_000)
    args = parser.parse_args()
    with scratch_database() as url:
        for takers, keys in ((1, 1), (8, 1), (8, 8)):
            wall, cpu = takes(url, args.takes, takers, keys)
            print(
                f"take, {takers} at once, {keys} key(s): {wall:6.1f} µs wall a take, "
                f"{cpu:6.1f} µs CPU of this process"
            )
        medians: dict[bool, list[float]] = {False: [], True: []}
        for shared in (False, True) * 3:  # interleaved: the machine's noise hits both
            latencies = requests_ms(url, args.requests, shared=shared)
            medians[shared].append(statistics.median(latencies))
        for shared, values in medians.items():
            label = "shared" if shared else "in memory"
            print(
                f"GET /v1/leads/{{id}}, budget {label}: median latency "
                f"{statistics.median(values):.3f} ms (rounds: "
                f"{', '.join(f'{v:.3f}' for v in values)})"
            )


if __name__ == "__main__":
    main()
