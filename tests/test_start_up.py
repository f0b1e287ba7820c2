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
