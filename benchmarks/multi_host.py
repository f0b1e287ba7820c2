"""The daily job on several hosts against the same job on one host, same machine.

    uv run python benchmarks/multi_host.py [--tenants 100000] [--companies 5000]

Builds the production topology of docs/multi-host.md twice with the same data set: once as
separate hosts (a network namespace each, talking over a bridge; needs root), once with
every process in the root namespace on loopback. Each time the daily job for the data set's
partition is queued through the webserver and launched by the daemon on the code server,
like a schedule's run. Prints the wall time of the run and of each step (from the run's own
step events in the instance), several hosts ÷ one host, and the machine-speed loop before
and after (docs/performance.md, "The machine").
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import date

from end_to_end import python_yardstick

from morpheus_pipelines.devtools import daily_runs as runs

DAY = date(2026, 11, 28)
RUN_TIMEOUT_S = 3600


def timed_run(dataset, *, isolated: bool) -> dict[str, float]:
    """Seconds of the run (start to end, as the instance recorded it) and of each step."""
    started = time.perf_counter()
    with runs.daily_topology(
        dataset, isolated=isolated, prefix="mpb", subnet="10.213.2.0/24"
    ) as top:
        print(f"  hosts up in {time.perf_counter() - started:.0f} s", flush=True)
        run_id = runs.queue_run(top, DAY.isoformat())
        finished = runs.wait_for_run(top, run_id, RUN_TIMEOUT_S)
        if finished["status"] != "SUCCESS":
            raise SystemExit(f"run {run_id} {finished['status']}:\n{top.logs()}")
        seconds = runs.step_seconds(finished)
        seconds["the run"] = finished["endTime"] - finished["startTime"]
    return seconds


def _median(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tenants", type=int, default=100_000)
    parser.add_argument("--companies", type=int, default=5_000)
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each, alternating; the median is shown"
    )
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    started = time.perf_counter()
    dataset = runs.dataset_for(DAY, tenants=args.tenants, companies=args.companies)
    print(f"generated {args.tenants:,} tenants, {args.companies:,} companies", flush=True)
    ones, severals = [], []
    for attempt in range(1, args.repeat + 1):
        print(f"one host (loopback), run {attempt}")
        ones.append(timed_run(dataset, isolated=False))
        print(f"several hosts (a network namespace each), run {attempt}")
        severals.append(timed_run(dataset, isolated=True))
        one_s, several_s = ones[-1]["the run"], severals[-1]["the run"]
        print(f"  the run: {one_s:.1f} s on one host, {several_s:.1f} s on several", flush=True)
    one, several = _median(ones), _median(severals)
    print(f"\nmedian of {args.repeat}")
    print(f"{'step':<44}{'one host s':>11}{'hosts s':>9}{'ratio':>7}")
    for key in [*(k for k in one if k != "the run"), "the run"]:
        if key in several:
            ratio = several[key] / one[key] if one[key] else float("nan")
            print(f"{key:<44}{one[key]:>11.1f}{several[key]:>9.1f}{ratio:>7.2f}")
    print(f"\ntotal wall time {time.perf_counter() - started:.0f} s")
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
