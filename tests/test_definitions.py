"""The code location loads, and the Dagster CLI validates it the way users run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

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


def test_dg_check_defs(project_root: Path, tmp_path: Path, database_url: str) -> None:
    """The `dg` CLI loads the same code location (pyproject's [tool.dg])."""
    env = dict(os.environ, MORPHEUS_DATABASE_URL=database_url, DAGSTER_HOME=str(tmp_path))
    (tmp_path / "dagster.yaml").write_text((project_root / "dagster.yaml").read_text())
    result = subprocess.run(
        [str(Path(sys.executable).with_name("dg")), "check", "defs"],
        cwd=project_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "All definitions loaded successfully" in result.stdout + result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
        [str(Path(sys.executable).with_name("dg")), "list", "defs"],
        [str(Path(sys.executable).with_name("dg")), "check", "defs"],
    ],
    ids=["dagster definitions validate", "dg list defs", "dg check defs"],
)
def test_loading_the_definitions_starts_no_database(
    project_root: Path, tmp_path: Path, argv: list[str]
) -> None:
    """With nothing configured and no DAGSTER_HOME, Dagster's temporary instance (from the
    project's dagster.yaml) must not start the embedded PostgreSQL under MORPHEUS_HOME."""
    home = tmp_path / "home"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MORPHEUS_", "DAGSTER_HOME", "DAGSTER_IS_DEV_CLI"))
    }
    env["MORPHEUS_HOME"] = str(home)
    result = subprocess.run(
        argv, cwd=project_root, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert not (home / "postgres").exists(), "an embedded PostgreSQL was started"


def test_only_the_assets_that_call_hubspot_get_the_credentials() -> None:
    """The token-bearing resource is injected where HubSpot is called (the snapshot, the
    owners mirror, the segment lists' reader, the re-engagement write-back, the engagement
    sync, the deal worker, the reconciliation, the outbox's drain and the task completions'
    reader) and nowhere else; the other assets, checks and sensors read the list id from
    `target_list` (no secret)."""
    repository = defs.get_repository_def()
    needs_token = set()
    for assets_def in repository.assets_defs_by_key.values():
        if "hubspot" in assets_def.required_resource_keys:
            needs_token |= {key.to_user_string() for key in assets_def.keys}
    for checks_def in repository.asset_checks_defs_by_key.values():
        if "hubspot" in checks_def.required_resource_keys:
            needs_token |= {str(key) for key in checks_def.check_keys}
    for sensor in repository.sensor_defs:
        if "hubspot" in sensor.required_resource_keys:
            needs_token.add(sensor.name)
    assert needs_token == {
        "hubspot_target_accounts",
        "sales_reps",
        "reengagement_segment_members",
        "reengagement_assignments",
        "hubspot_engagements",
        "hubspot_deal_events",
        "hubspot_reconciliation",
        "hubspot_outbox_delivery",
        "hubspot_task_completions",
    }


def test_selection_waits_for_the_snapshot() -> None:
    """Snapshot before selection: tenant_candidates depends on hubspot_target_accounts."""
    graph = defs.resolve_asset_graph()
    parents = graph.get(dg.AssetKey("tenant_candidates")).parent_keys
    assert dg.AssetKey("hubspot_target_accounts") in parents


def test_the_daily_job_runs_its_steps_in_one_process() -> None:
    # A process per step re-imports the code location (about 6 s) for each of six steps of a
    # chain (docs/performance.md, "Small runs").
    assert defs.resolve_job_def("apac_daily_job").executor_def.name == "in_process"
