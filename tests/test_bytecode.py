"""The test session's processes share one bytecode cache only where the environment would
have every process compile every source again (tests/support/bytecode.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.bytecode import share_bytecode

PREFIX = Path("/repo/.morpheus/pycache")


def test_an_environment_that_writes_no_bytecode_gets_a_cache_outside_the_sources() -> None:
    environ = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin"}
    assert share_bytecode(environ, PREFIX)
    assert environ == {"PYTHONPYCACHEPREFIX": str(PREFIX), "PATH": "/usr/bin"}


def test_an_environment_that_writes_bytecode_is_left_as_it_is() -> None:
    for environ in ({}, {"PYTHONDONTWRITEBYTECODE": ""}):
        before = dict(environ)
        assert not share_bytecode(environ, PREFIX)
        assert environ == before


def test_a_prefix_the_environment_names_is_kept() -> None:
    environ = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/elsewhere"}
    assert not share_bytecode(environ, PREFIX)
    assert environ == {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/elsewhere"}


def test_a_session_started_without_bytecode_writes_it_to_the_project_s_cache(
    project_root: Path,
) -> None:
    """What tests/conftest.py does before the workers start, in a fresh interpreter that
    writes no bytecode: its environment (which the workers inherit) and its own later imports
    now use the cache under the project, and a module imported afterwards lands there."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    environ["PYTHONDONTWRITEBYTECODE"] = "1"
    script = (
        "import importlib.util, json, os, sys\n"
        "import tests.conftest\n"
        "tests.conftest.pytest_configure(None)\n"
        # A module nothing above imports; its cache entry, if an earlier session wrote it,
        # is removed first, so only this process can have written it.
        "cached = importlib.util.cache_from_source(importlib.util.find_spec('wave').origin)\n"
        "prefix = os.environ.get('PYTHONPYCACHEPREFIX', '')\n"
        "if prefix and cached.startswith(prefix) and os.path.exists(cached): os.remove(cached)\n"
        "import wave\n"
        "print(json.dumps({\n"
        "    'prefix': prefix,\n"
        "    'still turned off': 'PYTHONDONTWRITEBYTECODE' in os.environ,\n"
        "    'writes': not sys.dont_write_bytecode,\n"
        "    'under the prefix': bool(prefix) and cached.startswith(prefix),\n"
        "    'written': os.path.exists(cached),\n"
        "}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=environ,
        cwd=project_root,
    )
    assert json.loads(result.stdout.splitlines()[-1]) == {
        "prefix": str(project_root / ".morpheus" / "pycache"),
        "still turned off": False,
        "writes": True,
        "under the prefix": True,
        "written": True,
    }


def test_this_worker_writes_bytecode_or_names_where() -> None:
    """This very process, started by the session after tests/conftest.py's hook: either the
    environment never turned bytecode off, or it names the cache the session writes to."""
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ or os.environ.get("PYTHONPYCACHEPREFIX")
    # And the process does what its environment says (the hook sets both in the session's own).
    assert sys.pycache_prefix == os.environ.get("PYTHONPYCACHEPREFIX")
    assert sys.dont_write_bytecode == bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
