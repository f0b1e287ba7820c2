"""A snapshot of the code location's definitions: asset keys, deps, groups, kinds, owners,
partitions, checks, job selections, schedules and sensors. An accidental rename or a lost
dependency fails here, so every change to what users see in the UI is a reviewed diff.

To accept an intended change: ``MORPHEUS_UPDATE_SNAPSHOTS=1 uv run pytest
tests/test_definitions_snapshot.py`` and commit the new ``tests/snapshots/definitions.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.definitions.freshness import CronFreshnessPolicy, TimeWindowFreshnessPolicy

from morpheus_pipelines.definitions import defs

SNAPSHOT = Path(__file__).parent / "snapshots" / "definitions.json"


def _partitions(definition: dg.PartitionsDefinition | None) -> str | None:
    if definition is None:
        return None
    kind = type(definition).__name__
    timezone = getattr(definition, "timezone", None)
    start = getattr(definition, "start", None)
    return f"{kind}({start.date() if start else ''}, {timezone})"


def _freshness(policy: dg.FreshnessPolicy | None) -> str | None:
    if isinstance(policy, TimeWindowFreshnessPolicy):
        warn = policy.warn_window.to_timedelta() if policy.warn_window else None
        return f"time window: fail {policy.fail_window.to_timedelta()}, warn {warn}"
    if isinstance(policy, CronFreshnessPolicy):
        return f"cron {policy.deadline_cron} {policy.timezone}, since {policy.lower_bound_delta}"
    return None if policy is None else repr(policy)


def _retry(assets_def: dg.AssetsDefinition | None) -> str | None:
    policy = assets_def.node_def.retry_policy if assets_def and assets_def.is_executable else None
    if policy is None:
        return None
    backoff, jitter = policy.backoff, policy.jitter
    return (
        f"{policy.max_retries} retries, {policy.delay} s, "
        f"{backoff.value if backoff else None}, {jitter.value if jitter else None}"
    )


def describe(definitions: dg.Definitions) -> dict[str, Any]:
    repository = definitions.get_repository_def()
    graph = definitions.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=lambda k: k.to_user_string()):
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "deps": sorted(parent.to_user_string() for parent in node.parent_keys),
            "kinds": sorted(node.kinds),
            "owners": sorted(node.owners),
            "partitions": _partitions(node.partitions_def),
            "backfill_policy": str(node.backfill_policy) if node.backfill_policy else None,
            "checks": sorted(check.name for check in node.check_keys),
            "tables_written": str(node.metadata.get("tables_written")),
            "freshness_policy": _freshness(node.freshness_policy),
            "retry_policy": _retry(repository.assets_defs_by_key.get(key)),
            "external": not node.is_executable,
        }
    jobs = {}
    for job in sorted(repository.get_all_jobs(), key=lambda j: j.name):
        if job.name.startswith("__"):
            continue
        jobs[job.name] = {
            "assets": sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys),
            "checks": sorted(str(k) for k in job.asset_layer.asset_graph.asset_check_keys),
        }
    schedules = {
        s.name: {
            "job": s.job_name,
            "cron": s.cron_schedule,
            "timezone": s.execution_timezone,
            "default_status": s.default_status.value,
        }
        for s in sorted(repository.schedule_defs, key=lambda s: s.name)
    }
    sensors = {
        s.name: {"default_status": s.default_status.value, "interval": s.minimum_interval_seconds}
        for s in sorted(repository.sensor_defs, key=lambda s: s.name)
    }
    resources = sorted(repository.get_top_level_resources())
    return {
        "assets": assets,
        "jobs": jobs,
        "schedules": schedules,
        "sensors": sensors,
        "resources": resources,
    }


def test_definitions_match_the_snapshot() -> None:
    current = describe(defs)
    if os.environ.get("MORPHEUS_UPDATE_SNAPSHOTS") == "1" or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert current == expected, (
        "the definitions changed; if intended, regenerate the snapshot with "
        "MORPHEUS_UPDATE_SNAPSHOTS=1 and review the diff"
    )
