"""Ad-platform webhooks: Meta Lead Ads (`leadgen`, signed) and Google Ads lead forms POSTed to
`morpheus serve` (its own process, two workers) on the embedded Postgres, from 16 keep-alive
connections, each delivery one new lead routed and owned in the request. Prints leads per
second and the per-delivery latency percentiles per endpoint, then every delivery sent again
(the platforms' retry: the same lead answered, nothing stored) and the ratio; checks that each
lead was stored once with an owner.

    uv run python benchmarks/sender_webhooks.py [--leads 3000] [--connections 16]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import statistics
import threading
import uuid
from collections.abc import Callable

import requests
from _common import scratch_database, send_concurrently
from end_to_end import python_yardstick
from sqlalchemy import func, select

from morpheus_pipelines.crm.models import Lead, SalesRep, Subscription
from morpheus_pipelines.crm.rules.subscription_settings import google_ads_key_hash
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.serve_process import morpheus_serve

APP_SECRET = "benchmark-meta-app-secret"
PAGE_ID = "1000001"
GOOGLE_KEY = "benchmark-google-key"
REPS = 10

Delivery = tuple[str, bytes, dict[str, str]]


def seed(url: str) -> uuid.UUID:
    subscription_id = uuid.uuid4()
    with get_session(url) as session:
        session.add(
            Subscription(
                id=subscription_id,
                name="Benchmark",
                metaPageId=PAGE_ID,
                googleAdsKeyHash=google_ads_key_hash(GOOGLE_KEY),
                defaultRegion="AU",
            )
        )
        session.flush()
        session.add_all(
            SalesRep(
                subscriptionId=subscription_id,
                email=f"rep{n}@acme.example",
                hubspotOwnerId=str(900 + n),
                isActive=True,
            )
            for n in range(REPS)
        )
    return subscription_id


def meta_delivery(n: int) -> Delivery:
    change = {"leadgen_id": f"LG{n}", "page_id": PAGE_ID, "form_id": "77", "ad_id": str(n % 9)}
    body = json.dumps(
        {
            "object": "page",
            "entry": [
                {"id": PAGE_ID, "time": 0, "changes": [{"field": "leadgen", "value": change}]}
            ],
        }
    ).encode()
    signature = hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return "/v1/webhooks/meta", body, {"X-Hub-Signature-256": f"sha256={signature}"}


def google_delivery(n: int) -> Delivery:
    body = json.dumps(
        {
            "lead_id": f"G{n}",
            "google_key": GOOGLE_KEY,
            "campaign_id": 123,
            "is_test": False,
            "user_column_data": [
                {"column_id": "EMAIL", "string_value": f"Buyer{n}@Example.com"},
                {"column_id": "PHONE_NUMBER", "string_value": f"04{n % 100_000_000:08d}"},
                {"column_id": "FULL_NAME", "string_value": "Ana Lima"},
            ],
        }
    ).encode()
    return "/v1/webhooks/google-ads", body, {}


def send_all(base: str, deliveries: list[Delivery], connections: int) -> tuple[float, list[float]]:
    """Every delivery from ``connections`` kept-alive connections (one session per thread)."""
    local = threading.local()

    def post(delivery: Delivery) -> requests.Response:
        if not hasattr(local, "http"):
            local.http = requests.Session()
            local.http.headers["Content-Type"] = "application/json"
        path, body, headers = delivery
        return local.http.post(base + path, data=body, headers=headers, timeout=30)

    return send_concurrently(deliveries, connections, post)


def report(label: str, leads: int, wall: float, latencies: list[float]) -> float:
    quantiles = statistics.quantiles(latencies, n=100)
    rate = leads / wall
    print(
        f"{label:<22} {leads:>6} leads: {wall:6.2f} s, {rate:6.0f} leads/s; "
        f"p50 {quantiles[49] * 1000:5.1f} ms, p99 {quantiles[98] * 1000:5.1f} ms"
    )
    return rate


def stored(url: str) -> dict[str, tuple[int, int]]:
    """Leads and leads with an owner, by source."""
    with get_session(url) as session:
        rows = session.execute(
            select(Lead.source, func.count(), func.count(Lead.ownerSalesRepId)).group_by(
                Lead.source
            )
        )
        return {source: (total, owned) for source, total, owned in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leads", type=int, default=3_000)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    endpoints: dict[str, Callable[[int], Delivery]] = {
        "meta_lead_ads": meta_delivery,
        "google_ads": google_delivery,
    }
    rates: dict[str, tuple[float, float]] = {}
    with scratch_database() as url:
        seed(url)
        environ = {"META_APP_SECRET": APP_SECRET}
        with morpheus_serve(url, workers=2, environ=environ) as (base, _pid):
            requests.get(f"{base}/healthz", timeout=5)
            for source, build in endpoints.items():
                deliveries = [build(n) for n in range(args.leads)]
                wall, latencies = send_all(base, deliveries, args.connections)
                first = report(f"{source} new", args.leads, wall, latencies)
                wall, latencies = send_all(base, deliveries, args.connections)
                rates[source] = (first, report(f"{source} replayed", args.leads, wall, latencies))
        counts = stored(url)
    for source, (first, again) in rates.items():
        print(f"{source}: replay / first pass throughput {again / first:.2f}x")
    print(f"stored (leads, with an owner) by source: {counts}")
    once = all(counts.get(source) == (args.leads, args.leads) for source in endpoints)
    print(f"every lead stored exactly once, with an owner: {once}")
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")
    if not once:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
