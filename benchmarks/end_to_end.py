"""The daily job at scale: 1,000,000 tenants against 50,000 target companies.

    uv run python benchmarks/end_to_end.py [--tenants 1000000] [--companies 50000]
                                           [--assets a,b,...] [--second-day]

Runs each asset of the daily job in turn on the embedded Postgres (a scratch database), with
the HubSpot and Domain Intelligence emulators on loopback in their own processes, and prints
per asset: wall time, rows written, rows per second, peak resident memory, and the ratio of
the asset's time to a bare ``COPY`` of its output rows into an unindexed table (the write
floor), measured in the same run. For the assets that call a service, "API floor" is the
requests they made divided by the client's rate budget: the least time those calls can take.
``--second-day`` also runs the job for the next partition with nothing changed (the steady
state: most tenants do not change from one day to the next).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from datetime import date, timedelta

import dagster as dg
import psycopg
from _common import emulator_process, scratch_database

from morpheus_pipelines.assets.tenants.schedules import DAILY_ASSETS
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.demo.dataset import generate_dataset
from morpheus_pipelines.devtools.source import SOURCE_COLUMNS, replace_source_tenants
from morpheus_pipelines.observability.events import log_events_to

# Output tables of each asset: (table, partition filter column or None)
OUTPUTS = {
    "hubspot_target_accounts": [("apac_hubspot_target_accounts", None)],
    "tenant_candidates": [("apac_tenant_candidates", "partition_key")],
    "enriched_tenants": [("apac_enriched_tenants", "partition_key")],
    "routed_tenants": [
        ("apac_active_tenants", None),
        ("apac_sales_owned_tenants", None),
        ("apac_routing_decisions", "partition_key"),
    ],
    "tenant_scores": [("apac_tenant_score_snapshots", "partition_key")],
    "daily_summary": [("apac_daily_summary_tenants", "partition_key")],
}
# Assets that call a service: the resource whose rate budget bounds their requests.
API_RESOURCES = {"hubspot_target_accounts": "hubspot", "enriched_tenants": "domain_intelligence"}


def api_floor(key: str, result: dg.ExecuteInProcessResult, resources: dict) -> float | None:
    """The asset's requests ÷ its client's budget in requests per second, or None."""
    if key not in API_RESOURCES:
        return None
    (event,) = result.get_asset_materialization_events()
    requests = event.materialization.metadata["requests"].value
    budget = resources[API_RESOURCES[key]].requests_per_10s
    # A value from the environment is an IntEnvVar (an int whose own value is 0).
    budget = budget.get_value() if hasattr(budget, "get_value") else budget
    return float(requests) / (float(budget) / 10.0)


class PeakMemory:
    """Samples this process's resident memory every 50 ms; ``peak`` since the last reset."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            with open("/proc/self/statm") as handle:
                rss = int(handle.read().split()[1]) * self._page
            self.peak = max(self.peak, rss)

    def reset(self) -> None:
        self.peak = 0


def copy_floor(url: str, table: str, column: str | None, partition: str) -> tuple[int, float]:
    """Rows of the asset's output, and the time to COPY them into a fresh unindexed table."""
    where = f" WHERE {column} = '{partition}'" if column else ""
    with psycopg.connect(libpq_url(url)) as conn:
        data = bytearray()
        with conn.cursor().copy(f"COPY (SELECT * FROM {table}{where}) TO STDOUT") as copy:
            for chunk in copy:
                data += chunk
        rows = conn.execute(f"SELECT count(*) FROM {table}{where}").fetchone()[0]
        conn.execute(f"CREATE TEMP TABLE floor_copy (LIKE {table})")
        started = time.perf_counter()
        with conn.cursor().copy("COPY floor_copy FROM STDIN") as copy:
            copy.write(bytes(data))
        conn.commit()
        return rows, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tenants", type=int, default=1_000_000)
    parser.add_argument("--companies", type=int, default=50_000)
    parser.add_argument("--assets", default=",".join(DAILY_ASSETS))
    parser.add_argument("--second-day", action="store_true")
    args = parser.parse_args()
    assets = args.assets.split(",")
    memory = PeakMemory()
    day = date(2026, 11, 29)
    started = time.perf_counter()
    dataset = generate_dataset(
        tenants=args.tenants, companies=args.companies, partition_day=day, seed=7
    )
    print(
        f"generated {args.tenants:,} tenants and {args.companies:,} companies in "
        f"{time.perf_counter() - started:.1f} s"
    )
    with scratch_database() as url:
        frame = dataset.tenants[list(SOURCE_COLUMNS)].astype(object)
        frame = frame.where(frame.notna(), None)
        t = time.perf_counter()
        replace_source_tenants(url, "devops", frame.itertuples(index=False, name=None))
        print(f"loaded the source table in {time.perf_counter() - t:.1f} s")
        del frame
        with (
            emulator_process("hubspot", dataset.hubspot_data()) as hs,
            emulator_process("domain-intel", dataset.domain_intel) as di,
        ):
            os.environ.update(dataset.environment())
            os.environ.update(
                MORPHEUS_DATABASE_URL=url,
                HUBSPOT_BASE_URL=hs,
                DOMAIN_INTELLIGENCE_BASE_URL=di,
                HUBSPOT_REQUESTS_PER_10S="100000",
            )
            log_events_to(__import__("pathlib").Path("/tmp/morpheus_bench_events.jsonl"))
            from morpheus_pipelines.definitions import defs

            days = [day.isoformat()] + (
                [(day + timedelta(days=1)).isoformat()] if args.second_day else []
            )
            for partition in days:
                print(f"\npartition {partition}")
                print(
                    f"{'asset':<26}{'seconds':>9}{'rows':>11}{'rows/s':>10}"
                    f"{'peak MiB':>10}{'floor s':>9}{'x floor':>9}{'API floor s':>13}"
                )
                for key in assets:
                    asset = defs.get_assets_def(key)
                    memory.reset()
                    t = time.perf_counter()
                    result = dg.materialize(
                        [asset],
                        partition_key=None if asset.partitions_def is None else partition,
                        resources=defs.resources,
                        raise_on_error=False,
                    )
                    seconds = time.perf_counter() - t
                    rows = floor = 0.0
                    for table, column in OUTPUTS[key]:
                        n, f = copy_floor(url, table, column, partition)
                        rows += n
                        floor += f
                    status = "" if result.success else "  FAILED"
                    api = api_floor(key, result, defs.resources) if result.success else None
                    print(
                        f"{key:<26}{seconds:>9.1f}{rows:>11,.0f}{rows / seconds:>10,.0f}"
                        f"{memory.peak / 2**20:>10,.0f}{floor:>9.2f}"
                        f"{seconds / max(floor, 1e-9):>9.1f}"
                        f"{'' if api is None else f'{api:.2f}':>13}{status}",
                        flush=True,
                    )
    print(f"\ntotal wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
