"""The daily job at scale: 1,000,000 tenants against 50,000 target companies.

    uv run python benchmarks/end_to_end.py [--tenants 1000000] [--companies 50000]
                                           [--assets a,b,...] [--second-day]
    uv run --with memray python benchmarks/end_to_end.py --heap [...]

Runs each asset of the daily job in turn on the embedded Postgres (a scratch database), with
the HubSpot and Domain Intelligence emulators on loopback in their own processes, and prints
per asset: wall time, rows written, rows per second, peak resident memory, and the ratio of
the asset's time to a bare ``COPY`` of its output rows into an unindexed table (the write
floor), measured in the same run. For the assets that call a service, "API floor" is the
requests they made divided by the client's rate budget: the least time those calls can take.
``--second-day`` also runs the job for the next two partitions: the second day with
``--changed`` (default 1 %) of the tenants changed in the source (seats, and for a third of
them the email), the third day with nothing changed. The third day is the fixed cost of a
day; what the second day costs above it is the price of its changes, printed against the
bare-``COPY`` floor of the rows those changes rewrote (docs/performance.md, "A quiet day").

Resident memory is what the system sees, but it also carries memory the allocator keeps
after it was freed, so its growth during an asset depends on what ran before. ``--heap``
records each asset's allocations with memray and prints the most it held live at once
("heap MiB"): what the asset's own code needs. Tracking slows the run and adds memray's own
memory to the resident figures; take the seconds and "peak MiB" from a run without it.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import date, timedelta

import dagster as dg
import psycopg
from _common import emulator_process, scratch_database, scratch_event_files

from morpheus_pipelines.assets.tenants.schedules import DAILY_ASSETS
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.demo.dataset import generate_dataset
from morpheus_pipelines.devtools.source import SOURCE_COLUMNS, replace_source_tenants
from morpheus_pipelines.platform.observability.events import log_events_to

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
    """Samples this process's resident memory every 50 ms; ``peak`` since the last reset, and
    ``growth``: how far above the resident memory at the reset it went (memory freed by
    earlier work — the generated dataset, earlier assets — is not returned to the system, so
    the peak alone carries what came before)."""

    def __init__(self) -> None:
        self.peak = 0
        self.base = 0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE")
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            with open("/proc/self/statm") as handle:
                rss = int(handle.read().split()[1]) * self._page
            self.peak = max(self.peak, rss)

    def reset(self) -> None:
        with open("/proc/self/statm") as handle:
            self.base = int(handle.read().split()[1]) * self._page
        self.peak = self.base

    @property
    def growth(self) -> int:
        return self.peak - self.base


class HeapPeak:
    """The most memory an asset's run held allocated at once, recorded by memray (every
    allocation, Python's and native code's alike, in every thread)."""

    def __init__(self) -> None:
        try:
            import memray
        except ImportError:
            raise SystemExit(
                "--heap records allocations with memray: "
                "uv run --with memray python benchmarks/end_to_end.py --heap ..."
            ) from None
        self._memray = memray
        self._directory = tempfile.TemporaryDirectory(prefix="morpheus_heap_")
        self._runs = itertools.count()
        self.peak = 0

    @contextlib.contextmanager
    def tracking(self) -> Iterator[None]:
        path = os.path.join(self._directory.name, f"{next(self._runs)}.bin")
        try:
            with self._memray.Tracker(path, native_traces=False):
                yield
            self.peak = self._memray.FileReader(path).metadata.peak_memory
        finally:
            if os.path.exists(path):
                os.remove(path)


FLOOR_REPEATS = 3


def step_seconds(result: dg.ExecuteInProcessResult) -> float:
    """The asset's step as Dagster times it (``STEP_SUCCESS``; the step's duration in the UI):
    without the run around it, which this benchmark starts once per asset (an instance, the
    run's start and end) and the daily job once a day."""
    return (
        sum(
            event.event_specific_data.duration_ms
            for event in result.all_events
            if event.event_type == dg.DagsterEventType.STEP_SUCCESS
        )
        / 1000
    )


def copy_floor(url: str, table: str, column: str | None, partition: str) -> tuple[int, float]:
    """Rows of the asset's output, and the time to COPY them into a fresh unindexed table:
    the median of :data:`FLOOR_REPEATS` copies, each into a new table. One copy, taken right
    after the asset while the server was still writing its pages out, moved by half between
    runs for the same rows (docs/performance.md, "A quiet day at 1,000,000 tenants")."""
    where = f" WHERE {column} = '{partition}'" if column else ""
    with psycopg.connect(libpq_url(url)) as conn:
        data = bytearray()
        with conn.cursor().copy(f"COPY (SELECT * FROM {table}{where}) TO STDOUT") as copy:
            for chunk in copy:
                data += chunk
        rows = conn.execute(f"SELECT count(*) FROM {table}{where}").fetchone()[0]
        seconds = []
        for _ in range(FLOOR_REPEATS):
            conn.execute(f"CREATE TEMP TABLE floor_copy (LIKE {table})")
            started = time.perf_counter()
            with conn.cursor().copy("COPY floor_copy FROM STDIN") as copy:
                copy.write(bytes(data))
            conn.commit()
            seconds.append(time.perf_counter() - started)
            conn.execute("DROP TABLE floor_copy")
        return rows, statistics.median(seconds)


def change_source(url: str, share: float) -> int:
    """Change ``share`` of the source tenants (a deterministic hash picks them): one more seat
    each, and for a third of them a new email address. Returns how many changed."""
    buckets = max(1, round(share * 10_000))
    with psycopg.connect(libpq_url(url)) as conn:
        changed = conn.execute(
            "UPDATE devops.tenants SET seats = coalesce(seats, 0) + 1, "
            "email = CASE WHEN abs(hashtext(id || 'e')) %% 3 = 0 THEN 'moved.' || email "
            "ELSE email END WHERE abs(hashtext(id)) %% 10000 < %s",
            (buckets,),
        ).rowcount
        conn.commit()
    return changed


def metadata_of(result: dg.ExecuteInProcessResult) -> dict:
    events = result.get_asset_materialization_events()
    if not events:
        return {}
    return {k: getattr(v, "value", v) for k, v in events[0].materialization.metadata.items()}


def changed_floor(key: str, floors: dict, meta: dict, routing_floors: dict) -> tuple[int, float]:
    """Rows the asset actually changed and the share of its floor they stand for: for the
    scores, the tenants scored and the bucket rows updated."""
    if key == "routed_tenants":
        decisions = floors["apac_routing_decisions"]
        buckets = [floors["apac_active_tenants"], floors["apac_sales_owned_tenants"]]
        bucket_rows = sum(n for n, _ in buckets) or 1
        decided, written = meta.get("tenants_decided", 0), meta.get("bucket_rows_written", 0)
        floor = decisions[1] * decided / max(decisions[0], 1)
        floor += sum(f for _, f in buckets) * written / bucket_rows
        return decided + written, floor
    if key == "tenant_scores":
        snapshots = floors["apac_tenant_score_snapshots"]
        scored = meta.get("tenants_scored", 0)
        updated = meta.get("bucket_rows_updated", 0)
        buckets = [routing_floors[t] for t in ("apac_active_tenants", "apac_sales_owned_tenants")]
        bucket_rows = sum(n for n, _ in buckets) or 1
        floor = snapshots[1] * scored / max(snapshots[0], 1)
        floor += sum(f for _, f in buckets) * updated / bucket_rows
        return scored + updated, floor
    if key == "enriched_tenants":
        (rows, floor) = floors["apac_enriched_tenants"]
        asked = meta.get("tenants_asked", rows)
        return asked, floor * asked / max(rows, 1)
    rows = sum(n for n, _ in floors.values())
    return rows, sum(f for _, f in floors.values())


TENANT_ASSETS = ("tenant_candidates", "enriched_tenants", "routed_tenants", "tenant_scores")


def python_yardstick() -> float:
    """Seconds for a Python loop of 10 million additions: how fast this machine is right now,
    to read seconds from different runs against (docs/performance.md, "The machine")."""
    started = time.perf_counter()
    total = 0
    for n in range(10_000_000):
        total += n
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tenants", type=int, default=1_000_000)
    parser.add_argument("--companies", type=int, default=50_000)
    parser.add_argument("--assets", default=",".join(DAILY_ASSETS))
    parser.add_argument("--second-day", action="store_true")
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument(
        "--heap", action="store_true", help="peak live heap per asset (needs --with memray)"
    )
    args = parser.parse_args()
    heap = HeapPeak() if args.heap else None
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    assets = args.assets.split(",")
    memory = PeakMemory()
    day = date(2026, 11, 28)
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
        days = [day.isoformat()] + (
            [(day + timedelta(days=n)).isoformat() for n in (1, 2)] if args.second_day else []
        )
        with (
            emulator_process("hubspot", dataset.hubspot_data()) as hs,
            emulator_process("domain-intel", dataset.domain_intel) as di,
            scratch_event_files(days),
        ):
            os.environ.update(dataset.environment())
            # The emulators have their copies: peak memory below is the pipeline's alone.
            del dataset
            gc.collect()
            os.environ.update(
                MORPHEUS_DATABASE_URL=url,
                HUBSPOT_BASE_URL=hs,
                DOMAIN_INTELLIGENCE_BASE_URL=di,
                HUBSPOT_REQUESTS_PER_10S="100000",
            )
            log_events_to(__import__("pathlib").Path("/tmp/morpheus_bench_events.jsonl"))
            from morpheus_pipelines.definitions import defs

            runs: dict[str, dict[str, dict]] = {}
            for index, partition in enumerate(days):
                if index == 1:
                    changed = change_source(url, args.changed)
                    print(f"\nchanged {changed:,} source tenants ({args.changed:.1%})")
                print(f"\npartition {partition}")
                print(
                    f"{'asset':<26}{'seconds':>9}{'step s':>8}{'rows':>11}{'rows/s':>10}"
                    f"{'peak MiB':>10}{'+MiB':>7}{'floor s':>9}{'x floor':>9}{'API floor s':>13}"
                    + (f"{'heap MiB':>10}" if heap else "")
                )
                runs[partition] = {}
                for key in assets:
                    asset = defs.get_assets_def(key)
                    memory.reset()
                    t = time.perf_counter()
                    with heap.tracking() if heap else contextlib.nullcontext():
                        result = dg.materialize(
                            [asset],
                            partition_key=None if asset.partitions_def is None else partition,
                            resources=defs.resources,
                            raise_on_error=False,
                        )
                    seconds = time.perf_counter() - t
                    floors = {
                        table: copy_floor(url, table, column, partition)
                        for table, column in OUTPUTS[key]
                    }
                    rows = sum(n for n, _ in floors.values())
                    floor = sum(f for _, f in floors.values())
                    status = "" if result.success else "  FAILED"
                    api = api_floor(key, result, defs.resources) if result.success else None
                    meta = metadata_of(result) if result.success else {}
                    step = step_seconds(result)
                    runs[partition][key] = {
                        "seconds": seconds,
                        "step": step,
                        "floors": floors,
                        "floor": floor,
                        "meta": meta,
                        "peak": memory.peak,
                    }
                    print(
                        f"{key:<26}{seconds:>9.1f}{step:>8.1f}{rows:>11,.0f}"
                        f"{rows / seconds:>10,.0f}"
                        f"{memory.peak / 2**20:>10,.0f}{memory.growth / 2**20:>7,.0f}{floor:>9.2f}"
                        f"{seconds / max(floor, 1e-9):>9.1f}"
                        f"{'' if api is None else f'{api:.2f}':>13}"
                        f"{f'{heap.peak / 2**20:>10,.0f}' if heap else ''}{status}",
                        flush=True,
                    )
                total = sum(r["seconds"] for r in runs[partition].values())
                print(f"{'the whole day':<26}{total:>9.1f}")
                if index == 0:  # the later days' phases are printed with their changes
                    for key, run in runs[partition].items():
                        if run["meta"].get("seconds_by_phase"):
                            print(f"{key:<26}phases: {run['meta']['seconds_by_phase']}")
            if args.second_day:
                print_quiet_day(runs, days, assets)
    print(f"\ntotal wall time {time.perf_counter() - started:.0f} s")
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


# The phases of a run that process the changed tenants; the rest is the day's fixed cost
# (listing the unchanged tenants, bookkeeping, checks). Scoring's bucket update brings the
# rows of the tenants whose recency moved with the day.
CHANGED_PHASES = {
    "routed_tenants": ("decide",),
    "tenant_scores": ("read", "score", "write", "update_buckets"),
}


def print_quiet_day(runs: dict, days: list[str], assets: list[str]) -> None:
    """Each later day's tenant assets split into the fixed cost and the work on the rows
    that changed, that work against the bare-COPY floor of those rows."""
    for partition in days[1:]:
        day = runs[partition]
        print(f"\n{partition}: fixed cost and the price of the changes, tenant assets")
        print(
            f"{'asset':<20}{'seconds':>9}{'fixed s':>9}{'changes s':>11}{'rows chg':>10}"
            f"{'floor chg s':>12}{'chg/floor':>10}{'carried':>10}"
        )
        for key in TENANT_ASSETS:
            if key not in assets:
                continue
            run = day[key]
            meta = run["meta"]
            rows, floor = changed_floor(
                key, run["floors"], meta, day.get("routed_tenants", run)["floors"]
            )
            phases = meta.get("seconds_by_phase") or {}
            changes = sum(phases.get(p, 0.0) for p in CHANGED_PHASES.get(key, ()))
            carried = meta.get("tenants_carried_forward", meta.get("tenants_reused", ""))
            ratio = f"{changes / floor:.1f}" if key in CHANGED_PHASES and floor > 0 else ""
            print(
                f"{key:<20}{run['seconds']:>9.1f}{run['seconds'] - changes:>9.1f}"
                f"{changes:>11.2f}{rows:>10,}{floor:>12.3f}{ratio:>10}{carried!s:>10}"
            )
            if phases:
                print(f"{'':<20}phases: {phases}")
    summed = [key for key in TENANT_ASSETS if key in assets]
    for timed, what in (("seconds", "each in a run of its own"), ("step", "their steps")):
        first = sum(runs[days[0]][key][timed] for key in summed)
        if not first:
            continue
        for partition in days[1:]:
            later = sum(runs[partition][key][timed] for key in summed)
            print(
                f"{partition} ÷ {days[0]}, {', '.join(summed)} ({what}): "
                f"{later:.2f} s ÷ {first:.2f} s = {later / first:.3f}"
            )


if __name__ == "__main__":
    main()
