"""How long a command waits before it does anything: the imports of the command line and of
the code location, in fresh processes (docs/performance.md, "Start-up").

    uv run python benchmarks/start_up.py [--repeat 5] [--dg]

Prints the `machine:` loop, then for each command the median wall time of ``--repeat`` fresh
processes and their median CPU time (user + system: on a shared machine, the figure another
process's load moves least), twice: as this environment runs Python, and with compiled
bytecode (a cache directory of its own, warmed once: how the deployment image runs, since it
installs with ``UV_COMPILE_BYTECODE=1``). With ``PYTHONDONTWRITEBYTECODE`` set, the first way
compiles every module's source again in every process. Then the definitions' import against a
bare ``import dagster`` (the floor a run worker cannot go under), the largest packages left in
it, and the `machine:` loop again. No database.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import largest_imports
from end_to_end import python_yardstick

BIN = Path(sys.executable).parent


def commands(dg: bool) -> dict[str, list[str]]:
    python = [sys.executable, "-c"]
    measured = {
        "bare interpreter": [*python, "pass"],
        "import dagster (the floor)": [*python, "import dagster"],
        "import morpheus_pipelines.cli": [*python, "import morpheus_pipelines.cli"],
        "morpheus --help": [str(BIN / "morpheus"), "--help"],
        "import morpheus_pipelines.definitions": [
            *python,
            "import morpheus_pipelines.definitions",
        ],
        "dagster definitions validate": [
            str(BIN / "dagster"),
            "definitions",
            "validate",
            "-m",
            "morpheus_pipelines.definitions",
        ],
    }
    if dg:  # `dg` starts a second process that loads the definitions
        measured["dg check defs"] = [str(BIN / "dg"), "check", "defs"]
    return measured


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_seconds(command: list[str], repeat: int, env: dict[str, str]) -> tuple[float, float]:
    """The median wall and CPU seconds of ``repeat`` runs of ``command``, each a fresh
    process (its CPU includes the processes it waited for)."""
    wall, cpu = [], []
    for _ in range(repeat):
        started, cpu_before = time.perf_counter(), _children_cpu()
        subprocess.run(command, check=True, env=env, capture_output=True)
        wall.append(time.perf_counter() - started)
        cpu.append(_children_cpu() - cpu_before)
    return statistics.median(wall), statistics.median(cpu)


def environments(cache: str) -> dict[str, dict[str, str]]:
    # Each validate on an ephemeral instance: a DAGSTER_HOME would open its storage first.
    plain = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    compiled = {k: v for k, v in plain.items() if k != "PYTHONDONTWRITEBYTECODE"}
    compiled["PYTHONPYCACHEPREFIX"] = cache
    return {"as this environment runs Python": plain, "with compiled bytecode": compiled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per command")
    parser.add_argument("--dg", action="store_true", help="also time `dg check defs`")
    args = parser.parse_args()
    print(f"machine: a Python loop of 10 million additions took {python_yardstick():.2f} s")
    print(f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    cache = tempfile.mkdtemp(prefix="start-up-bytecode-")
    try:
        envs = environments(cache)
        warm = envs["with compiled bytecode"]
        for command in commands(args.dg).values():  # writes the bytecode cache
            subprocess.run(command, check=True, env=warm, capture_output=True)
        for how, env in envs.items():
            print(f"{how} (median of {args.repeat}; wall, CPU):")
            seconds = {}
            for name, command in commands(args.dg).items():
                seconds[name] = median_seconds(command, args.repeat, env)
                wall, cpu = seconds[name]
                print(f"  {name:<40}{wall:6.2f} s {cpu:6.2f} s")
            floor = seconds["import dagster (the floor)"]
            definitions = seconds["import morpheus_pipelines.definitions"]
            print(
                f"  definitions / import dagster: {definitions[0] / floor[0]:.2f} (wall), "
                f"{definitions[1] / floor[1]:.2f} (CPU)"
            )
            print("  largest packages in the definitions' import (-X importtime, cumulative):")
            for package, part in largest_imports("import morpheus_pipelines.definitions", env=env):
                print(f"    {package:<22}{part:6.2f} s")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"machine: the same loop at the end took {python_yardstick():.2f} s")


if __name__ == "__main__":
    main()
