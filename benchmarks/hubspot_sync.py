"""The HubSpot snapshot sync against the emulator in HubSpot's 190-requests-per-10-s mode.

    uv run python benchmarks/hubspot_sync.py [--companies 100000] [--rate 190]

Prints the requests issued against the minimum (1 + ⌈N/250⌉ + ⌈N/100⌉), the 429s received,
and the wall time against the rate-limit floor (minimum requests ÷ (rate / 10) per second).
"""

from __future__ import annotations

import argparse
import math
import time

from _common import peak_rss_mib, scratch_database

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator, build_hubspot_data
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from morpheus_pipelines.tenants.steps.hubspot_snapshot import sync_target_list

TOKEN = "pat-na1-benchmark"


def companies(count: int) -> list[dict]:
    return [
        {
            "id": str(10_000_000 + i),
            "name": f"Company {i}",
            "domain": f"company{i}.com.au",
            "website": f"https://www.company{i}.com.au",
            "hs_additional_domains": f"company{i}.co.jp;company{i}.co.kr",
            "portal_id__c": f"P{i}",
            "account_id__c": f"A{i}",
            "account_allias__c": f"C{i}",
            "hs_lastmodifieddate": "2026-11-01T00:00:00Z",
        }
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--companies", type=int, default=100_000)
    parser.add_argument("--rate", type=int, default=190, help="requests per 10 s")
    args = parser.parse_args()
    n = args.companies
    minimum = 1 + math.ceil(n / 250) + math.ceil(n / 100)
    floor_seconds = minimum / (args.rate / 10)
    data = build_hubspot_data(companies(n), token=TOKEN)
    with scratch_database() as url, HubSpotEmulator(data, rate_limit=args.rate) as emulator:
        client = HubSpotClient(emulator.base_url, TOKEN, requests_per_10s=args.rate)
        start = time.perf_counter()
        outcome = sync_target_list(
            client, lambda: get_session(url), list_id="19544", run_id="benchmark"
        )
        wall = time.perf_counter() - start
        client.close()
        served_429 = emulator.log.count(status=429)
    assert outcome.succeeded, outcome.error
    print(f"companies: {n:,}  rate limit: {args.rate} per 10 s")
    print(
        f"requests issued: {outcome.requests:,}  minimum: {minimum:,}  "
        f"ratio {outcome.requests / minimum:.3f}"
    )
    print(
        f"429s received: {outcome.rate_limited} (emulator served {served_429}); "
        f"retries: {outcome.retries}"
    )
    print(
        f"wall time: {wall:.1f} s  rate-limit floor: {floor_seconds:.1f} s  "
        f"ratio {wall / floor_seconds:.3f}"
    )
    print(f"rows upserted: {outcome.rows_upserted:,}  peak RSS: {peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
