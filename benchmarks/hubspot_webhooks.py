"""HubSpot webhook intake: deliveries of 100 signed events POSTed to `morpheus serve` (its own
process, two workers) on the embedded Postgres, as HubSpot sends them. Every event is an owner
change of a known contact, so each one is stored and applied. Prints events per second, the
per-delivery latency percentiles, then the same deliveries sent again (HubSpot's retry: every
event already stored, nothing applied) and the ratio; checks that each event was applied once.

    uv run python benchmarks/hubspot_webhooks.py [--events 10000] [--clients 4]
"""

from __future__ import annotations

import argparse
import statistics
import uuid
from collections.abc import Sequence
from typing import Any

import requests
from _common import scratch_database, send_concurrently
from end_to_end import python_yardstick
from sqlalchemy import func, select

from morpheus_pipelines.crm.api.webhooks import PATH
from morpheus_pipelines.crm.models import Contact, HubSpotWebhookEvent, Subscription
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators.hubspot import WebhookSender
from morpheus_pipelines.devtools.serve_process import morpheus_serve

CLIENT_SECRET = "benchmark-client-secret"
PORTAL_ID = 70001
BATCH = 100  # HubSpot's largest delivery


def seed(url: str, contacts: int) -> None:
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(Subscription(id=subscription_id, name="Benchmark", hubspotPortalId=PORTAL_ID))
        session.flush()
        session.add_all(
            Contact(
                subscriptionId=subscription_id,
                email=f"person{n}@customer.example",
                hubspotContactId=str(100_000 + n),
                hubspotOwnerId="500",
            )
            for n in range(contacts)
        )


def deliveries(sender: WebhookSender, events: int) -> list[list[dict[str, Any]]]:
    changes = [
        sender.property_change(100_000 + n, "hubspot_owner_id", str(501 + n % 7))
        for n in range(events)
    ]
    return [changes[i : i + BATCH] for i in range(0, len(changes), BATCH)]


def send_all(
    sender: WebhookSender, batches: Sequence[list[dict[str, Any]]], clients: int, *, retry: bool
) -> tuple[float, list[float]]:
    """Send every batch from ``clients`` threads; wall seconds and per-delivery seconds."""
    return send_concurrently(batches, clients, sender.resend if retry else sender.send)


def report(label: str, events: int, wall: float, latencies: list[float]) -> float:
    quantiles = statistics.quantiles(latencies, n=100)
    rate = events / wall
    print(
        f"{label:<9} {events:>6} events in {len(latencies)} deliveries: {wall:6.2f} s, "
        f"{rate:7.0f} events/s; per delivery p50 {quantiles[49] * 1000:.0f} ms, "
        f"p99 {quantiles[98] * 1000:.0f} ms"
    )
    return rate


def counts(url: str) -> dict[str, int]:
    with get_session(url) as session:
        rows = session.execute(
            select(HubSpotWebhookEvent.status, func.count()).group_by(HubSpotWebhookEvent.status)
        )
        return {str(status): n for status, n in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    with scratch_database() as url:
        seed(url, args.events)
        environ = {"HUBSPOT_CLIENT_SECRET": CLIENT_SECRET}
        with morpheus_serve(url, workers=2, environ=environ) as (base, _pid):
            sender = WebhookSender(f"{base}{PATH}", CLIENT_SECRET, portal_id=PORTAL_ID)
            requests.get(f"{base}/healthz", timeout=5)  # a warm connection pool on both sides
            batches = deliveries(sender, args.events)
            wall, latencies = send_all(sender, batches, args.clients, retry=False)
            first = report("new", args.events, wall, latencies)
            after_first = counts(url)
            wall, latencies = send_all(sender, batches, args.clients, retry=True)
            replay = report("replayed", args.events, wall, latencies)
            after_replay = counts(url)
    print(f"stored by status after the first pass: {after_first}; after the replay: {after_replay}")
    applied_once = after_first == after_replay == {"applied": args.events}
    print(f"every event applied exactly once: {applied_once}")
    print(f"replay / first pass throughput: {replay / first:.2f}x")
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")
    if not applied_once:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
