"""The code location loads, and the Dagster CLI validates it the way users run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from morpheus_pipelines.definitions import defs


def test_definitions_resolve() -> None:
    assert isinstance(defs, dg.Definitions)
    defs.get_repository_def()  # raises on any wiring error


def test_dagster_definitions_validate(
    project_root: Path, tmp_path: Path, database_url: str
) -> None:
    env = dict(os.environ, MORPHEUS_DATABASE_URL=database_url, DAGSTER_HOME=str(tmp_path))
    (tmp_path / "dagster.yaml").write_text((project_root / "dagster.yaml").read_text())
    result = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
        cwd=project_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "All code locations passed validation" in result.stderr + result.stdout
