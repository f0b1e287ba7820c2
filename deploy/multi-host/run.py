"""The multi-host recipe of docs/multi-host.md, run on this machine as separate hosts.

    sudo uv run python deploy/multi-host/run.py [--tenants 1000] [--keep]

Makes one network namespace per host on a bridge (10.213.0.0/24), starts each host's
processes in the order of the recipe, loads ``--tenants`` demo tenants, launches a backfill
of yesterday's CST partition of ``apac_daily_job`` through the webserver and waits for the
daemon to run it to completion. ``--keep`` leaves everything up (the UI is at the printed
address) until Ctrl-C; then, or at once without it, every process, namespace and link is
removed.
"""

from __future__ import annotations

import argparse
import contextlib
import threading

from morpheus_pipelines.devtools import daily_runs as runs
from morpheus_pipelines.devtools.demo.runner import yesterday_cst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tenants", type=int, default=1_000)
    parser.add_argument("--companies", type=int, default=100)
    parser.add_argument("--keep", action="store_true", help="stay up until Ctrl-C")
    args = parser.parse_args()
    day = yesterday_cst()
    dataset = runs.dataset_for(day, tenants=args.tenants, companies=args.companies)
    with runs.daily_topology(dataset, isolated=True) as top:
        print(f"{'host':<10} {'address':<14} processes")
        for name, host in top.net.hosts.items():
            names = ", ".join(p.name for p in host.processes) or "PostgreSQL"
            print(f"{name:<10} {host.address:<14} {names}")
        print(f"Dagster UI   {top.webserver_url}")
        print(f"intake API   {top.intake_url}")
        backfill = runs.launch_backfill(top, day.isoformat())
        run_id = runs.backfill_run(top, backfill)
        print(f"backfill {backfill}: run {run_id} for {day}", flush=True)
        finished = runs.wait_for_run(top, run_id, timeout=3600)
        print(f"run {run_id} {finished['status']}")
        for step, seconds in runs.step_seconds(finished).items():
            print(f"  {step:<44} {seconds:>7.1f} s")
        if args.keep:
            print("up until Ctrl-C")
            with contextlib.suppress(KeyboardInterrupt):
                threading.Event().wait()
        return 0 if finished["status"] == "SUCCESS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
