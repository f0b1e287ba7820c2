"""Draining the HubSpot outbox: 10,000 queued lead contacts written to the HubSpot emulator
(over HTTP, enforcing HubSpot's budget of 100 requests per rolling 10 s) by the drain step,
on the embedded Postgres. Prints the requests made against the minimum (one batch of 100 per
call, plus the portal's three key properties), and the wall time against the floor the rate
budget sets; then the same with HubSpot failing: three batches answered 503 once and one input
in 50 refused (207) in the first drain, drained until nothing is due.

    uv run python benchmarks/hubspot_outbox.py [--rows 10000]
"""

from __future__ import annotations

import argparse
import math
import time
import uuid
from datetime import UTC, datetime, timedelta
from functools import partial

from _common import scratch_database
from end_to_end import python_yardstick
from sqlalchemy import func, select, text

from morpheus_pipelines.crm.models import HubSpotOutboxRow, Subscription
from morpheus_pipelines.crm.rules.hubspot_outbox import BATCH_SIZE
from morpheus_pipelines.crm.steps.hubspot_outbox import drain_outbox
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient

TOKEN = "pat-benchmark"
BUDGET = 100  # requests per rolling window, HubSpot's default
WINDOW_S = 10.0
KEY_PROPERTIES = 3

_SEED = """
WITH lead AS (
    INSERT INTO leads (id, "subscriptionId", "idempotencyKey", "requestFingerprint", source,
                       "sourceSubmissionId", email, "ownerHubspotOwnerId", response)
    SELECT gen_random_uuid(), :sub, 'k' || n, 'f', 'web-form', 's' || n,
           'person' || n || '@customer.example', '101', '{}'
    FROM generate_series(1, :rows) AS n
    RETURNING id, "subscriptionId"
)
INSERT INTO hubspot_outbox ("subscriptionId", kind, "intentKey", payload, "leadId")
SELECT "subscriptionId", 'contact', 'lead:' || id || :suffix, '{}', id FROM lead
"""


def seed(url: str, rows: int) -> uuid.UUID:
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(Subscription(id=subscription_id, name="Benchmark"))
        session.flush()
        session.execute(text(_SEED), {"sub": subscription_id, "rows": rows, "suffix": ":contact"})
    return subscription_id


def rate_floor(requests: int) -> float:
    """Seconds the budget forces: every request past each window's first ``BUDGET`` waits
    for the next window."""
    return max(0, math.ceil(requests / BUDGET) - 1) * WINDOW_S


def statuses(url: str, subscription_id: uuid.UUID) -> dict[str, int]:
    with get_session(url) as session:
        rows = session.execute(
            select(HubSpotOutboxRow.status, func.count())
            .where(HubSpotOutboxRow.subscriptionId == subscription_id)
            .group_by(HubSpotOutboxRow.status)
        )
        return {status: n for status, n in rows}


def run(url: str, rows: int, *, faults: bool, budget: int | None = BUDGET) -> None:
    """Drain ``rows`` queued contacts until none is pending; ``budget`` None: no rate limit
    on either side (what the drain itself costs)."""
    subscription_id = seed(url, rows)
    with HubSpotEmulator(
        {"token": TOKEN}, rate_limit=budget, rate_limit_interval_s=WINDOW_S
    ) as hubspot:
        if faults:
            for nth in (10, 40, 70):  # three batches answered 503 once: retried at once
                hubspot.fail(503, endpoint="contacts_batch_upsert", nth=nth)
            hubspot.fail_inputs("contacts_batch_upsert", every=50, times=None)
        client = HubSpotClient(
            hubspot.base_url,
            TOKEN,
            requests_per_10s=budget or 1_000_000,
            retry_count=3,
            max_backoff=1.0,
        )
        sessions = partial(get_session, url)
        clock = datetime.now(UTC)
        started = time.perf_counter()
        drains = 0
        with client:
            while True:
                drains += 1
                drain_outbox(sessions, client, subscription_id, now=lambda at=clock: at)
                if faults and drains == 1:
                    hubspot.faults.clear()  # HubSpot recovers; the refused rows are retried
                pending = statuses(url, subscription_id).get("pending", 0)
                if not pending or drains > 20:
                    break
                clock += timedelta(hours=2)  # past every back-off
        wall = time.perf_counter() - started
        made = client.stats.requests
    minimum = math.ceil(rows / BATCH_SIZE) + KEY_PROPERTIES
    floor = rate_floor(minimum) if budget else 0.0
    label = "with faults" if faults else ("clean" if budget else "no budget")
    speed = (
        f"rate floor {floor:.1f} s ({wall / floor:.2f}x)" if floor else f"{rows / wall:.0f} rows/s"
    )
    print(
        f"{label:<11} {rows} rows in {drains} drain(s): {made} requests "
        f"(minimum {minimum}, {made / minimum:.2f}x); wall {wall:.2f} s, {speed}; "
        f"rows by status {statuses(url, subscription_id)}; "
        f"contacts in HubSpot {len(hubspot.contacts())}"
    )
    if len(hubspot.contacts()) != rows or statuses(url, subscription_id) != {"done": rows}:
        raise SystemExit("the drain lost or duplicated a row")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    with scratch_database() as url:
        run(url, args.rows, faults=False)
    with scratch_database() as url:
        run(url, args.rows, faults=True)
    with scratch_database() as url:
        run(url, args.rows, faults=False, budget=None)
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
