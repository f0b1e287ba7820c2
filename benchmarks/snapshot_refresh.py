"""The HubSpot snapshot sync in a new process, as each daily run does it: the domain roots of
every company computed, against the roots taken from the snapshot the last sync left.

    uv run python benchmarks/snapshot_refresh.py [--companies 50000] [--repeat 3]

A scratch database is synced once from the emulator (in its own process). Each measurement
is then a sync of the same list in a fresh process, timed from after its imports, the two
kinds alternating:

* **computed** — the recorded snapshot hash is made stale first, as after a hand edit or
  another normalisation, so every root is computed;
* **reused** — the snapshot as the last sync left it, so the roots of unchanged values are
  taken from it.

Prints each kind's median seconds, their difference and ratio, the roots counted, and the
`machine:` loop at the start and the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from _common import emulator_process, scratch_database
from end_to_end import python_yardstick
from hubspot_sync import TOKEN, companies

LIST_ID = "19544"


def measure(url: str, base_url: str, kind: str) -> None:
    """One sync in this process; prints its seconds and roots as JSON."""
    from sqlalchemy import text

    from morpheus_pipelines.db.session import get_session
    from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
    from morpheus_pipelines.tenants.steps.hubspot_snapshot import sync_target_list

    if kind == "computed":
        with get_session(url) as session:
            session.execute(
                text(
                    "UPDATE apac_hubspot_target_sync_state "
                    "SET last_successful_snapshot_hash = 'stale' WHERE list_id = :id"
                ),
                {"id": LIST_ID},
            )
    # The budget lifted, as end_to_end.py does: the emulator, not a rate limit, sets the pace.
    client = HubSpotClient(base_url, TOKEN, requests_per_10s=100_000)
    started = time.perf_counter()
    outcome = sync_target_list(client, lambda: get_session(url), list_id=LIST_ID, run_id=kind)
    seconds = time.perf_counter() - started
    client.close()
    assert outcome.succeeded and outcome.roots is not None, outcome.error
    print(
        json.dumps(
            {
                "seconds": seconds,
                "reused": outcome.roots.reused,
                "computed": outcome.roots.computed,
            }
        )
    )


def fresh_process(url: str, base_url: str, kind: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, __file__, "--measure", url, base_url, kind],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--companies", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--measure", nargs=3, metavar=("URL", "BASE_URL", "KIND"))
    args = parser.parse_args()
    if args.measure:
        measure(*args.measure)
        return
    from morpheus_pipelines.devtools.emulators import build_hubspot_data

    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    data = build_hubspot_data(companies(args.companies), token=TOKEN)
    with scratch_database() as url, emulator_process("hubspot", data) as base_url:
        fresh_process(url, base_url, "computed")  # the first sync
        runs: dict[str, list[dict[str, float]]] = {"computed": [], "reused": []}
        for _ in range(args.repeat):
            for kind, results in runs.items():
                results.append(fresh_process(url, base_url, kind))
    medians = {kind: statistics.median(r["seconds"] for r in rs) for kind, rs in runs.items()}
    print(f"companies: {args.companies:,}; each a sync in a new process, median of {args.repeat}")
    for kind, results in runs.items():
        last = results[-1]
        seconds = ", ".join(f"{r['seconds']:.2f}" for r in results)
        print(
            f"{kind:>9}: {medians[kind]:.2f} s (runs {seconds}); roots computed "
            f"{last['computed']:,.0f}, taken from the snapshot {last['reused']:,.0f}"
        )
    print(
        f"reused - computed: {medians['reused'] - medians['computed']:+.2f} s; "
        f"reused / computed: {medians['reused'] / medians['computed']:.2f}"
    )
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
