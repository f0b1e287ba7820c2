"""A small day through the command line: what a user waits for when a partition of 1,000
tenants runs, and how much of it is importing the code location.

    uv run python benchmarks/small_run.py [--tenants 1000] [--companies 200]

Prints the import time of ``morpheus_pipelines.definitions`` (fresh interpreter, best of 3,
minus a bare interpreter's start) with its largest parts from ``-X importtime``, then the wall
time of ``dagster job execute -j apac_daily_job`` for one partition (the ``dagster/partition``
tag) on a
scratch database, with the HubSpot and Domain Intelligence emulators in their own processes:
the whole job, process start-up included, as a user starts it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import date

from _common import emulator_process, largest_imports, scratch_database

from morpheus_pipelines.devtools.demo.dataset import generate_dataset
from morpheus_pipelines.devtools.source import SOURCE_COLUMNS, replace_source_tenants


def _seconds(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, capture_output=True)
    return time.perf_counter() - started


def import_seconds() -> tuple[float, list[tuple[str, float]]]:
    """Best-of-3 import of the code location minus a bare start, and the top packages."""
    bare = min(_seconds([sys.executable, "-c", "pass"]) for _ in range(3))
    full = min(
        _seconds([sys.executable, "-c", "import morpheus_pipelines.definitions"]) for _ in range(3)
    )
    return full - bare, largest_imports("import morpheus_pipelines.definitions")


DAILY_PARTITIONED = "tenant_candidates,enriched_tenants,routed_tenants,tenant_scores,daily_summary"


def cli_commands(day: str) -> dict[str, list[str]]:
    """The two ways a user runs a day from the command line: the job, and the assets (what a
    materialisation or a backfill from the UI runs: Dagster's implicit asset job)."""
    dagster = [sys.executable, "-m", "dagster"]
    return {
        "`dagster job execute -j apac_daily_job`": [
            *dagster,
            "job",
            "execute",
            "-m",
            "morpheus_pipelines.definitions",
            "-j",
            "apac_daily_job",
            "--tags",
            f'{{"dagster/partition": "{day}"}}',
        ],
        "`dagster asset materialize` (the five partitioned daily assets)": [
            *dagster,
            "asset",
            "materialize",
            "-m",
            "morpheus_pipelines.definitions",
            "--select",
            DAILY_PARTITIONED,
            "--partition",
            day,
        ],
    }


def run_day(tenants: int, companies: int, how: str) -> float:
    day = date(2026, 11, 29)
    dataset = generate_dataset(tenants=tenants, companies=companies, partition_day=day, seed=7)
    with scratch_database() as url:
        frame = dataset.tenants[list(SOURCE_COLUMNS)].astype(object)
        replace_source_tenants(
            url, "devops", frame.where(frame.notna(), None).itertuples(index=False, name=None)
        )
        with (
            emulator_process("hubspot", dataset.hubspot_data()) as hubspot,
            emulator_process("domain-intel", dataset.domain_intel) as domain_intel,
            tempfile.TemporaryDirectory() as dagster_home,
        ):
            env = (
                os.environ
                | dataset.environment()
                | {
                    "MORPHEUS_DATABASE_URL": url,
                    "HUBSPOT_BASE_URL": hubspot,
                    "DOMAIN_INTELLIGENCE_BASE_URL": domain_intel,
                    "DAGSTER_HOME": dagster_home,  # an empty instance: the CLI's own defaults
                }
            )
            return _seconds(cli_commands(day.isoformat())[how], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=1_000)
    parser.add_argument("--companies", type=int, default=200)
    args = parser.parse_args()
    seconds, parts = import_seconds()
    print(f"import morpheus_pipelines.definitions: {seconds:.2f} s (fresh interpreter)")
    for name, part in parts:
        print(f"  {name:<24}{part:6.2f} s")
    for how in cli_commands("-"):
        day = run_day(args.tenants, args.companies, how)
        print(
            f"one partition of {args.tenants:,} tenants, {how}: "
            f"{day:.1f} s (goal: under 15 s) -> {'met' if day < 15 else 'missed'}"
        )


if __name__ == "__main__":
    main()
