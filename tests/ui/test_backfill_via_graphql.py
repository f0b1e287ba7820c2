"""A partition backfill launched the way the Dagster UI launches it, end to end.

The real ``dagster dev`` (webserver + daemon, the project's ``dagster.yaml`` on a Postgres
instance) serves the code location; the test talks to it only through GraphQL, with the
mutations and input shapes the UI sends:

1. ``launchPipelineExecution`` of ``__ASSET_JOB`` selecting ``hubspot_target_accounts`` and
   all its checks (the asset page's *Materialize* button for an unpartitioned asset);
2. ``launchPartitionBackfill`` with ``assetSelection`` (the five daily assets) and
   ``partitionNames`` (three CST days) — the launch dialog's pure asset backfill;
3. ``partitionBackfillOrError`` polled until the backfill daemon completes it.

Then it checks, through GraphQL and the warehouse, that the single-run backfill policy was
honoured (one run materialised the whole partition range of each asset), that every run
succeeded, that every partition of every asset was materialised, and that the asset checks
(including ``snapshot_freshness``) were listed and evaluated.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import text

from morpheus_pipelines.db.session import get_session

if TYPE_CHECKING:
    from tests.support.dagster_ui import DagsterUI

pytestmark = pytest.mark.slow

SNAPSHOT_ASSET = "hubspot_target_accounts"
DAILY_ASSETS = [
    "tenant_candidates",
    "enriched_tenants",
    "routed_tenants",
    "tenant_scores",
    "daily_summary",
]
ROUTING_CHECKS = [
    "buckets_disjoint",
    "every_candidate_routed_once",
    "decisions_match_buckets",
    "forced_ids_sales_owned",
    "forced_ids_in_source",
]
SCORE_CHECKS = ["routing_messages_allowlisted"]
RUN_TIMEOUT_S = 90.0
BACKFILL_TIMEOUT_S = 150.0
RUN_TERMINAL = {"SUCCESS", "FAILURE", "CANCELED"}

PYTHON_ERROR = "... on PythonError { message stack }"

REPOSITORIES = (
    """
query Repositories {
  repositoriesOrError {
    __typename
    ... on RepositoryConnection { nodes { name location { name } } }
    """
    + PYTHON_ERROR
    + """
  }
}
"""
)

ASSET_NODE = """
query AssetNode($assetKey: AssetKeyInput!) {
  assetNodeOrError(assetKey: $assetKey) {
    __typename
    ... on AssetNode {
      isPartitioned
      jobNames
      backfillPolicy { policyType maxPartitionsPerRun }
      assetChecksOrError {
        __typename
        ... on AssetChecks {
          checks {
            name
            jobNames
            executionForLatestMaterialization {
              runId
              status
              evaluation { success severity description }
            }
          }
        }
      }
    }
  }
}
"""

# LAUNCH_PIPELINE_EXECUTION_MUTATION of the UI (LaunchAssetExecutionButton).
LAUNCH_RUN = (
    """
mutation LaunchPipelineExecution($executionParams: ExecutionParams!) {
  launchPipelineExecution(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { id pipelineName } }
    ... on PipelineNotFoundError { message }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
    """
    + PYTHON_ERROR
    + """
  }
}
"""
)

# LAUNCH_PARTITION_BACKFILL_MUTATION of the UI (BackfillUtils).
LAUNCH_BACKFILL = (
    """
mutation LaunchPartitionBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId launchedRunIds }
    ... on PartitionSetNotFoundError { message }
    ... on PartitionKeysNotFoundError { message }
    ... on UnauthorizedError { message }
    ... on PipelineNotFoundError { message }
    ... on RunConflict { message }
    ... on ConflictingExecutionParamsError { message }
    ... on InvalidSubsetError { message }
    """
    + PYTHON_ERROR
    + """
  }
}
"""
)

RUN = (
    """
query Run($runId: ID!) {
  runOrError(runId: $runId) {
    __typename
    ... on Run { id status jobName }
    """
    + PYTHON_ERROR
    + """
  }
}
"""
)

BACKFILL = (
    """
query Backfill($backfillId: String!) {
  partitionBackfillOrError(backfillId: $backfillId) {
    __typename
    ... on PartitionBackfill {
      id
      status
      isAssetBackfill
      numPartitions
      partitionNames
      assetSelection { path }
      error { message stack }
      runs(limit: 100) { id status }
    }
    ... on BackfillNotFoundError { message }
    """
    + PYTHON_ERROR
    + """
  }
}
"""
)

BACKFILL_RUNS = (
    """
query BackfillRuns($filter: RunsFilter!) {
  runsOrError(filter: $filter) {
    __typename
    ... on Runs {
      results {
        id
        status
        jobName
        assetSelection { path }
        tags { key value }
      }
    }
    """
    + PYTHON_ERROR
    + """
  }
}
"""
)

MATERIALIZATIONS = """
query Materializations($assetKey: AssetKeyInput!, $partitions: [String!]) {
  assetOrError(assetKey: $assetKey) {
    __typename
    ... on Asset {
      assetMaterializations(partitions: $partitions, limit: 100) { partition runId }
    }
  }
}
"""

CHECK_EXECUTIONS = """
query CheckExecutions($assetKey: AssetKeyInput!, $checkName: String!) {
  assetCheckExecutions(assetKey: $assetKey, checkName: $checkName, limit: 20) {
    runId
    status
    partition
    evaluation { success severity description }
  }
}
"""

UI_TAGS = [{"key": "dagster/from_ui", "value": "true"}]
# The project's default executor is in-process (docs/performance.md, "Small runs"): the
# launchpad's run config for the snapshot run, and the backfill, need no executor settings.
NO_RUN_CONFIG = ""


def key(name: str) -> dict[str, Any]:
    return {"path": [name]}


def wait_for_run(ui: DagsterUI, run_id: str) -> str:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    status = None
    while time.monotonic() < deadline:
        ui.assert_alive()
        run = ui.graphql(RUN, {"runId": run_id})["runOrError"]
        assert run["__typename"] == "Run", run
        status = run["status"]
        if status in RUN_TERMINAL:
            return status
        time.sleep(1)
    pytest.fail(f"run {run_id} still {status} after {RUN_TIMEOUT_S:.0f} s\n{ui.log_tail()}")


def wait_for_backfill(ui: DagsterUI, backfill_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + BACKFILL_TIMEOUT_S
    backfill: dict[str, Any] = {}
    while time.monotonic() < deadline:
        ui.assert_alive()
        backfill = ui.graphql(BACKFILL, {"backfillId": backfill_id})["partitionBackfillOrError"]
        assert backfill["__typename"] == "PartitionBackfill", backfill
        if backfill["status"] in {"FAILED", "CANCELED", "COMPLETED_FAILED", "FAILING"}:
            pytest.fail(
                f"backfill {backfill_id} {backfill['status']}: {backfill['error']}; runs "
                f"{backfill['runs']}\n{ui.log_tail()}"
            )
        if backfill["status"] in {"COMPLETED", "COMPLETED_SUCCESS"}:
            return backfill
        time.sleep(2)
    pytest.fail(
        f"backfill {backfill_id} still {backfill.get('status')} after "
        f"{BACKFILL_TIMEOUT_S:.0f} s; runs {backfill.get('runs')}\n{ui.log_tail()}"
    )


def checks_of(ui: DagsterUI, asset: str) -> dict[str, dict[str, Any]]:
    node = ui.graphql(ASSET_NODE, {"assetKey": key(asset)})["assetNodeOrError"]
    assert node["__typename"] == "AssetNode", node
    checks = node["assetChecksOrError"]
    assert checks["__typename"] == "AssetChecks", checks
    return {c["name"]: c for c in checks["checks"]}


def test_daily_backfill_launched_like_the_ui(dagster_ui: DagsterUI) -> None:
    ui = dagster_ui
    repositories = ui.graphql(REPOSITORIES)["repositoriesOrError"]
    assert repositories["__typename"] == "RepositoryConnection", repositories
    (repository,) = repositories["nodes"]
    repository_selector = {
        "repositoryLocationName": repository["location"]["name"],
        "repositoryName": repository["name"],
    }

    # The daily assets declare the single-run policy the backfill must honour.
    for asset in DAILY_ASSETS:
        node = ui.graphql(ASSET_NODE, {"assetKey": key(asset)})["assetNodeOrError"]
        assert node["__typename"] == "AssetNode", node
        assert node["isPartitioned"] is True, asset
        assert node["backfillPolicy"]["policyType"] == "SINGLE_RUN", (asset, node)

    # 1. The snapshot asset with all its checks, as the asset page's Materialize button does.
    snapshot_checks = checks_of(ui, SNAPSHOT_ASSET)
    assert {"snapshot_freshness", "snapshot_refresh_succeeded"} <= set(snapshot_checks), sorted(
        snapshot_checks
    )
    launched = ui.graphql(
        LAUNCH_RUN,
        {
            "executionParams": {
                "mode": "default",
                "runConfigData": NO_RUN_CONFIG,
                "executionMetadata": {"tags": UI_TAGS},
                "selector": {
                    **repository_selector,
                    "pipelineName": "__ASSET_JOB",
                    "assetSelection": [key(SNAPSHOT_ASSET)],
                    "assetCheckSelection": [
                        {"assetKey": key(SNAPSHOT_ASSET), "name": name}
                        for name in sorted(snapshot_checks)
                    ],
                },
            }
        },
    )["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    snapshot_run = launched["run"]["id"]
    assert wait_for_run(ui, snapshot_run) == "SUCCESS", ui.log_tail()

    # Every snapshot check is listed and was evaluated, green, by that run; the freshness
    # check (a separate @asset_check) included.
    snapshot_checks = checks_of(ui, SNAPSHOT_ASSET)
    for name in snapshot_checks:
        assert_check_passed(ui, SNAPSHOT_ASSET, name, snapshot_run)
    # No schedule evaluates it on its own any more (the daemon's freshness policy watches
    # the asset without runs): its newest execution is this run's.
    freshness = snapshot_checks["snapshot_freshness"]["executionForLatestMaterialization"]
    assert freshness and freshness["runId"] == snapshot_run, snapshot_checks
    assert freshness["evaluation"]["success"] is True, freshness

    # 2. The daily assets over three CST days, as the launch dialog's asset backfill does
    #    (default run config: the project's in-process executor, one process per run).
    last = ui.partition_day
    partitions = [(last - timedelta(days=n)).isoformat() for n in (2, 1, 0)]
    result = ui.graphql(
        LAUNCH_BACKFILL,
        {
            "backfillParams": {
                "tags": UI_TAGS,
                "assetSelection": [key(a) for a in DAILY_ASSETS],
                "partitionNames": partitions,
                "fromFailure": False,
            }
        },
    )["launchPartitionBackfill"]
    assert result["__typename"] == "LaunchBackfillSuccess", result
    backfill_id = result["backfillId"]

    # 3. Until the daemon completes it (or fails it: then the test fails with its error).
    backfill = wait_for_backfill(ui, backfill_id)
    assert backfill["isAssetBackfill"] is True
    assert backfill["numPartitions"] == len(partitions)
    assert sorted("/".join(a["path"]) for a in backfill["assetSelection"]) == sorted(DAILY_ASSETS)

    runs = ui.graphql(
        BACKFILL_RUNS, {"filter": {"tags": [{"key": "dagster/backfill", "value": backfill_id}]}}
    )["runsOrError"]
    assert runs["__typename"] == "Runs", runs
    runs = runs["results"]
    assert runs, "the backfill launched no run"
    assert {r["id"] for r in runs} == {r["id"] for r in backfill["runs"]}
    for run in runs:
        assert run["status"] == "SUCCESS", run

    # Single-run policy: each daily asset was materialised by exactly one run, which covered
    # the whole range (no run per partition).
    runs_of: dict[str, list[dict[str, Any]]] = {a: [] for a in DAILY_ASSETS}
    for run in runs:
        tags = {t["key"]: t["value"] for t in run["tags"]}
        assert "dagster/partition" not in tags, f"a run per partition: {run}"
        assert tags.get("dagster/asset_partition_range_start") == partitions[0], run
        assert tags.get("dagster/asset_partition_range_end") == partitions[-1], run
        for asset_key in run["assetSelection"] or []:
            runs_of.setdefault("/".join(asset_key["path"]), []).append(run)
    assert set(runs_of) == set(DAILY_ASSETS), sorted(runs_of)
    for asset, asset_runs in runs_of.items():
        assert len(asset_runs) == 1, (asset, [r["id"] for r in asset_runs])
    run_of = {asset: asset_runs[0]["id"] for asset, asset_runs in runs_of.items()}

    # Every partition of every asset has a materialisation from its backfill run.
    for asset in DAILY_ASSETS:
        events = ui.graphql(MATERIALIZATIONS, {"assetKey": key(asset), "partitions": partitions})
        events = events["assetOrError"]
        assert events["__typename"] == "Asset", (asset, events)
        materialised = {(e["partition"], e["runId"]) for e in events["assetMaterializations"]}
        assert materialised == {(p, run_of[asset]) for p in partitions}, (asset, materialised)

    # The routing and scoring checks are listed and were evaluated, green, by the run.
    for asset, names in (("routed_tenants", ROUTING_CHECKS), ("tenant_scores", SCORE_CHECKS)):
        assert set(checks_of(ui, asset)) == set(names), asset
        # What the asset's Checks tab shows: the latest evaluation is this run's, green.
        for check in checks_of(ui, asset).values():
            latest = check["executionForLatestMaterialization"]
            assert latest and latest["runId"] == run_of[asset], (asset, check)
            assert latest["status"] == "SUCCEEDED" and latest["evaluation"]["success"], check
        for name in names:
            assert_check_passed(ui, asset, name, run_of[asset])

    # The warehouse agrees: every partition routed, scored and summarised by the backfill
    # run, on the snapshot the first run took; the last day matches what the data planted.
    assert_warehouse(ui, partitions, run_of)


def assert_check_passed(ui: DagsterUI, asset: str, name: str, run_id: str) -> None:
    """The check has an evaluation from ``run_id``, and every evaluation of that run passed.

    For an unpartitioned check of a partitioned asset materialised over a partition range,
    Dagster also plans one execution per partition; with no partition-scoped result they
    resolve as SKIPPED without an evaluation (the assets report their checks once per run,
    not per partition). Those are tolerated; anything else without an evaluation
    (IN_PROGRESS, EXECUTION_FAILED) is not.
    """
    executions = ui.graphql(CHECK_EXECUTIONS, {"assetKey": key(asset), "checkName": name})
    mine = [e for e in executions["assetCheckExecutions"] if e["runId"] == run_id]
    evaluated = [e for e in mine if e["evaluation"] is not None]
    assert evaluated, f"{asset}:{name} has no evaluation from run {run_id}: {mine}"
    for execution in evaluated:
        assert execution["status"] == "SUCCEEDED", (asset, name, execution)
        assert execution["evaluation"]["success"] is True, (asset, name, execution)
    for execution in mine:
        if execution["evaluation"] is None:
            assert execution["status"] == "SKIPPED" and execution["partition"], (
                asset,
                name,
                execution,
            )


def assert_warehouse(ui: DagsterUI, partitions: list[str], run_of: dict[str, str]) -> None:
    expected = ui.dataset.expected
    with get_session(ui.warehouse_url) as session:

        def rows(statement: str, **params: Any) -> list[tuple]:
            return [tuple(r) for r in session.execute(text(statement), params).all()]

        sync = rows(
            "SELECT last_successful_sync_id, last_successful_list_total, last_attempt_status "
            "FROM apac_hubspot_target_sync_state"
        )
        assert len(sync) == 1, sync
        sync_id, list_total, last_attempt = sync[0]
        assert (list_total, last_attempt) == (len(ui.dataset.companies), "success"), sync
        per_partition = {
            p: (decisions, runs_, statuses, syncs)
            for p, decisions, runs_, statuses, syncs in rows(
                "SELECT partition_key, count(*), array_agg(DISTINCT run_id), "
                "array_agg(DISTINCT snapshot_status), "
                "array_agg(DISTINCT hubspot_sync_id) FILTER (WHERE hubspot_sync_id IS NOT NULL) "
                "FROM apac_routing_decisions GROUP BY partition_key"
            )
        }
        assert set(per_partition) == set(partitions), per_partition
        for p, (decisions, run_ids, statuses, sync_ids) in per_partition.items():
            assert decisions > 0, p
            assert run_ids == [run_of["routed_tenants"]], (p, run_ids)
            # the snapshot was refreshed by the earlier run, not by the backfill: stale
            assert statuses == ["stale"], (p, statuses)
            assert sync_ids == [sync_id], (p, sync_ids, sync_id)
        day = partitions[-1]
        candidates = rows(
            "SELECT count(*) FROM apac_tenant_candidates WHERE partition_key = :p", p=day
        )[0][0]
        assert candidates == expected["candidates"], (candidates, expected["candidates"])
        methods = dict(
            rows(
                "SELECT hubspot_match_method, count(*) FROM apac_routing_decisions "
                "WHERE partition_key = :p AND routing_rule <> 'forced_sales_owned' "
                "AND hubspot_match_method IS NOT NULL GROUP BY 1",
                p=day,
            )
        )
        assert {m: methods.get(m, 0) for m in expected["matches"]} == expected["matches"]
        buckets = dict(
            rows(
                "SELECT tenant_bucket, count(*) FROM apac_routing_decisions "
                "WHERE partition_key = :p AND routing_rule <> 'retired' GROUP BY 1",
                p=day,
            )
        )
        assert buckets == expected["buckets"], (buckets, expected["buckets"])
        # the earlier days' signups that the last day no longer selects are retired
        retired_candidates = rows(
            "SELECT count(*) FROM apac_routing_decisions d JOIN apac_tenant_candidates c "
            "USING (partition_key, tenant_id) WHERE d.partition_key = :p "
            "AND d.routing_rule = 'retired'",
            p=day,
        )[0][0]
        assert retired_candidates == 0
        scored = dict(
            rows(
                "SELECT partition_key, count(*) FROM apac_tenant_score_snapshots "
                "WHERE run_id = :r GROUP BY 1",
                r=run_of["tenant_scores"],
            )
        )
        assert set(scored) == set(partitions) and all(scored.values()), scored
        summarised = dict(
            rows(
                "SELECT partition_key, count(*) FROM apac_daily_summary_metrics "
                "WHERE run_id = :r GROUP BY 1",
                r=run_of["daily_summary"],
            )
        )
        assert set(summarised) == set(partitions), summarised
