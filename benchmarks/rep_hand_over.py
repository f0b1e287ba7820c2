"""A rep who leaves hands over: a rep with 5,000 open leads and 500 PENDING follow-up tasks is
deactivated and handed over to the ten other reps of their pool (docs/ownership.md, "When a rep
leaves"), on the embedded Postgres; then the outbox sends every move to the HubSpot emulator
(over HTTP, with HubSpot's budget of 100 requests per rolling 10 s). Prints the hand-over's
seconds, the requests to HubSpot against the minimum (a batch of 100 per call: the contacts'
new owners, the tasks' upserts and their associations, plus the portal's three key
properties), and checks that every lead and task moved once, evenly.

    uv run python benchmarks/rep_hand_over.py [--leads 5000] [--tasks 500] [--reps 10]
"""

from __future__ import annotations

import argparse
import math
import time
import uuid
from collections import Counter
from functools import partial

from _common import scratch_database
from end_to_end import python_yardstick
from sqlalchemy import func, select, text

from morpheus_pipelines.crm.models import (
    FollowUpTask,
    HubSpotOutboxRow,
    Lead,
    RoutingPool,
    RoutingPoolMember,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.crm.rules.hubspot_outbox import BATCH_SIZE
from morpheus_pipelines.crm.steps.hubspot_outbox import drain_outbox
from morpheus_pipelines.crm.steps.rep_hand_over import hand_over_departed_reps
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient

TOKEN = "pat-benchmark"
KEY_PROPERTIES = 3

_LEADS = """
INSERT INTO leads (id, "subscriptionId", "idempotencyKey", "requestFingerprint", source,
                   "sourceSubmissionId", email, "hubspotContactId", "poolId",
                   "ownerSalesRepId", "ownerHubspotOwnerId", response)
SELECT gen_random_uuid(), :sub, 'k' || n, 'f', 'web-form', 's' || n,
       'lead' || n || '@customer.example', 'L' || n, :pool, :rep, '100', '{}'
FROM generate_series(1, :n) AS n
"""
_TASKS = """
WITH contact AS (
    INSERT INTO contacts ("subscriptionId", email, "hubspotContactId", "hubspotOwnerId")
    SELECT :sub, 'person' || n || '@customer.example', 'C' || n, '100'
    FROM generate_series(1, :n) AS n
    RETURNING id
)
INSERT INTO follow_up_tasks ("subscriptionId", "contactId", "salesRepId", type, status, "dueAt")
SELECT :sub, id, :rep, 'CALL', 'PENDING', now() + interval '1 day' FROM contact
"""


def seed(url: str, leads: int, tasks: int, reps: int) -> tuple[uuid.UUID, int, list[int]]:
    """The departing rep (owner 100) with their leads and tasks, and ``reps`` colleagues in
    the same pool (owners 101…)."""
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(Subscription(id=subscription_id, name="Benchmark"))
        session.flush()
        people = [
            SalesRep(
                subscriptionId=subscription_id,
                email=f"rep{i}@acme.example",
                hubspotOwnerId=str(100 + i),
                openLeads=leads if i == 0 else 0,
            )
            for i in range(reps + 1)
        ]
        session.add_all(people)
        session.flush()
        pool = RoutingPool(subscriptionId=subscription_id, name="all", isDefault=True)
        session.add(pool)
        session.flush()
        session.add_all(RoutingPoolMember(poolId=pool.id, salesRepId=p.id) for p in people)
        leaving = people[0].id
        values = {"sub": subscription_id, "pool": pool.id, "rep": leaving}
        session.execute(text(_LEADS), values | {"n": leads})
        session.execute(text(_TASKS), values | {"n": tasks})
        people[0].isActive = False
        return subscription_id, leaving, [p.id for p in people[1:]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leads", type=int, default=5_000)
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    with scratch_database() as url:
        subscription_id, leaving, others = seed(url, args.leads, args.tasks, args.reps)
        sessions = partial(get_session, url)

        started = time.perf_counter()
        [hand_over] = hand_over_departed_reps(sessions, subscription_id)
        took = time.perf_counter() - started
        t = hand_over.tally
        print(
            f"hand-over: {t.leads} leads and {t.tasks} tasks in {took:.2f} s "
            f"({(t.leads + t.tasks) / took:,.0f} moves/s)"
        )

        with get_session(url) as session:
            owners = Counter(
                session.scalars(select(Lead.ownerSalesRepId).where(Lead.status == "open"))
            )
            task_owners = Counter(session.scalars(select(FollowUpTask.salesRepId)))
            load = dict(session.execute(select(SalesRep.id, SalesRep.openLeads)).all())
            queued = session.scalar(select(func.count()).select_from(HubSpotOutboxRow))
        even = math.ceil(args.leads / len(others))
        if (
            leaving in owners
            or leaving in task_owners
            or set(owners) != set(others)
            or max(owners.values()) - min(owners.values()) > 1
            or load[leaving] != 0
            or sum(load[o] for o in others) != args.leads
        ):
            raise SystemExit(f"the hand-over did not move everything evenly: {owners}")
        print(
            f"leads per new owner {min(owners.values())}–{max(owners.values())} "
            f"(even split {even}); tasks per new owner "
            f"{min(task_owners.values())}–{max(task_owners.values())}; "
            f"departed rep's load {load[leaving]}; outbox rows queued {queued:,}"
        )

        data = {"token": TOKEN}
        with HubSpotEmulator(data, rate_limit=100, rate_limit_interval_s=10.0) as hubspot:
            for n in range(1, args.leads + 1):
                hubspot.set_contact(f"L{n}", {"hubspot_owner_id": "100"})
            for n in range(1, args.tasks + 1):
                hubspot.set_contact(f"C{n}", {"hubspot_owner_id": "100"})
            client = HubSpotClient(hubspot.base_url, TOKEN, requests_per_10s=100)
            started = time.perf_counter()
            with client:
                report = drain_outbox(sessions, client, subscription_id)
            drain = time.perf_counter() - started
            still_theirs = sum(
                1
                for c in hubspot.contacts().values()
                if c["properties"].get("hubspot_owner_id") == "100"
            )
        contact_batches = math.ceil((args.leads + args.tasks) / BATCH_SIZE)
        task_batches = 2 * math.ceil(args.tasks / BATCH_SIZE)  # upsert, then associate
        minimum = contact_batches + task_batches + KEY_PROPERTIES
        made = client.stats.requests
        print(
            f"drain: {dict(report.written)} in {drain:.2f} s; {made} requests to HubSpot "
            f"(minimum {minimum}, {made / minimum:.2f}x); contacts still owned by the rep "
            f"who left {still_theirs}"
        )
        if still_theirs:
            raise SystemExit("HubSpot still shows the departed rep as an owner")
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
