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


def _value(value: object) -> object:
    """Definition metadata as declared: a plain value, or a Dagster ``MetadataValue``."""
    return value.value if isinstance(value, dg.MetadataValue) else value


def _executable_assets() -> dict[str, dg.AssetsDefinition]:
    repository = defs.get_repository_def()
    return {
        key.to_user_string(): assets_def
        for key, assets_def in repository.assets_defs_by_key.items()
        if assets_def.is_executable
    }


def test_the_assets_that_call_a_service_retry_with_back_off_and_no_other_does() -> None:
    """A service call is a `hubspot`, `domain_intelligence`, `meta_graph` or `message_senders`
    resource; those assets carry the exponential, jittered policy, and the SQL-only assets
    (routing, scores, reports, the lead rules) none: a retry there would hide a bug."""
    services = {"hubspot", "domain_intelligence", "meta_graph", "message_senders"}
    retried, calling = set(), set()
    for name, assets_def in _executable_assets().items():
        if assets_def.required_resource_keys & services:
            calling.add(name)
        policy = assets_def.node_def.retry_policy
        if policy is not None:
            retried.add(name)
            assert policy.max_retries == 3 and policy.delay == 30, name
            assert (policy.backoff, policy.jitter) == (
                dg.Backoff.EXPONENTIAL,
                dg.Jitter.PLUS_MINUS,
            ), name
    assert retried == calling
    assert {"hubspot_target_accounts", "enriched_tenants", "lead_enrichment"} <= retried
    assert {"lead_contact_retrieval", "outbound_message_delivery"} <= retried
    assert not retried & {"routed_tenants", "tenant_scores", "daily_summary", "lead_scores"}


def test_every_table_asset_carries_its_model_s_column_schema() -> None:
    """An asset whose metadata names the tables it writes has `dagster/column_schema` for
    the first (`dagster/table_name`), with exactly its model's columns, types and nullability
    in the model's order."""
    from morpheus_pipelines.crm.repositories.tables import CRM_TABLES
    from morpheus_pipelines.tenants.store.tables import TENANT_TABLES

    tables = {**CRM_TABLES, **TENANT_TABLES}
    graph = defs.resolve_asset_graph()
    without = set()
    for key in graph.get_all_asset_keys():
        metadata = graph.get(key).metadata
        if "tables_written" not in metadata:
            without.add(key.to_user_string())
            continue
        name = _value(metadata["dagster/table_name"])
        schema = _value(metadata["dagster/column_schema"])
        assert isinstance(schema, dg.TableSchema), key
        model = tables[name]
        assert [c.name for c in schema.columns] == [c.name for c in model.columns], key
        for column, model_column in zip(schema.columns, model.columns, strict=True):
            assert column.constraints.nullable == bool(model_column.nullable), (key, column)
            assert column.type, (key, column)
    # Every asset writes a table but the attribution report (files only) and the DevOps
    # source, which nothing here writes.
    assert without == {"lead_attribution", "source_tenants"}


def test_the_tables_written_elsewhere_are_external_assets() -> None:
    graph = defs.resolve_asset_graph()
    external = {
        key.to_user_string()
        for key in graph.get_all_asset_keys()
        if not graph.get(key).is_executable
    }
    # automation_firings is reported by its sensor, the others are written outside Dagster.
    assert external == {"leads", "activities", "source_tenants", "automation_firings"}
    source = graph.get(dg.AssetKey("source_tenants"))
    assert source.owners == ["team:devops"]
    assert _value(source.metadata["dagster/table_name"]) == "devops.tenants"
    for name in ("leads", "activities"):
        node = graph.get(dg.AssetKey(name))
        assert (node.group_name, _value(node.metadata["dagster/table_name"])) == ("leads", name)
        assert "morpheus serve" in (node.description or "")
    assert dg.AssetKey("source_tenants") in graph.get(dg.AssetKey("tenant_candidates")).parent_keys


def test_the_lineage_graph_has_no_islands() -> None:
    """An island is an asset with neither an upstream nor a downstream asset: nothing in the
    graph says where its input comes from or who reads what it writes. Roots (no upstream)
    are allowed, as long as something depends on them: the external tables and the assets
    that read only from HubSpot."""
    graph = defs.resolve_asset_graph()
    islands = sorted(
        key.to_user_string()
        for key in graph.get_all_asset_keys()
        if not graph.get(key).parent_keys and not graph.get(key).child_keys
    )
    assert islands == []
    roots = sorted(
        key.to_user_string() for key in graph.get_all_asset_keys() if not graph.get(key).parent_keys
    )
    assert roots == [
        "activities",
        "hubspot_target_accounts",
        "hubspot_task_completions",
        "leads",
        "sales_reps",
        "source_tenants",
    ]
