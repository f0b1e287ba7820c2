"""What a command or a run worker imports before it does anything (docs/decisions/0051).

Each import runs in a fresh interpreter: in this one, the other tests have long imported
everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# What `morpheus --help` and every command's own help must start without.
NOT_FOR_THE_COMMAND_LINE = (
    "pandas",
    "pyarrow",
    "matplotlib",
    "numpy",
    "dagster",
    "sqlalchemy",
    "alembic",
    "psycopg",
    "pydantic",
)

# What the code location does not need to define its assets: the steps import them when a run
# executes them (psycopg: when the first session connects).
NOT_FOR_THE_DEFINITIONS = (
    "pandas",
    "pyarrow",
    "matplotlib",
    "numpy",
    "alembic",
    "psycopg",
    "jinja2",
    "s3fs",
)


def imported_after(statement: str) -> set[str]:
    """The top-level packages a fresh interpreter holds after ``statement``."""
    script = (
        f"{statement}\n"
        "import json, sys\n"
        "print(json.dumps(sorted({name.partition('.')[0] for name in sys.modules})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_the_command_line_imports_none_of_the_pipelines_dependencies() -> None:
    assert imported_after("import morpheus_pipelines.cli") & set(NOT_FOR_THE_COMMAND_LINE) == set()


@pytest.mark.parametrize("group", ["", "db", "pool", "rep", "dev", "serve", "emulate"])
def test_a_commands_help_imports_none_of_them(group: str) -> None:
    argv = [group, "--help"] if group else ["--help"]
    statement = (
        "import contextlib, io\n"
        "from morpheus_pipelines.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main({argv!r}) == 0"
    )
    assert imported_after(statement) & set(NOT_FOR_THE_COMMAND_LINE) == set()


def test_the_code_location_defines_its_assets_without_the_steps_dependencies() -> None:
    assert (
        imported_after("import morpheus_pipelines.definitions") & set(NOT_FOR_THE_DEFINITIONS)
        == set()
    )


def test_the_code_location_is_built_without_collections_and_left_out_of_those_at_exit() -> None:
    """No collection walks the code location while it is built (from Dagster's import until
    its ``defs`` exist), the collector is given back once it is, and the heap is frozen before
    the interpreter's collections at exit (an exit handler registered first runs last, and
    sees it frozen)."""
    script = (
        "import atexit, gc, json, sys\n"
        "atexit.register(lambda: print(json.dumps({'frozen at exit': gc.get_freeze_count()})))\n"
        "during_the_build = []\n"
        "def collection(phase, info):\n"
        "    location = sys.modules.get('morpheus_pipelines.definitions')\n"
        "    building = 'dagster' in sys.modules and not hasattr(location, 'defs')\n"
        "    if phase == 'start' and building:\n"
        "        during_the_build.append(info['generation'])\n"
        "gc.callbacks.append(collection)\n"
        "import morpheus_pipelines.definitions\n"
        "print(json.dumps({'collections': during_the_build, 'enabled': gc.isenabled()}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    built, at_exit = (json.loads(line) for line in result.stdout.splitlines()[-2:])
    assert built == {"collections": [], "enabled": True}
    assert at_exit["frozen at exit"] > 100_000
