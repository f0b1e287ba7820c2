"""``tenant_scores``: the same versioned model over both buckets (docs/scoring.md)."""

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.tenants.routing import event_file_links, routed_tenants
from morpheus_pipelines.assets.tenants.selection import GROUP
from morpheus_pipelines.platform.partitions import daily_partitions
from morpheus_pipelines.resources.pipeline import PipelineSettingsResource
from morpheus_pipelines.resources.scoring import ScoringModelResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

if TYPE_CHECKING:
    from morpheus_pipelines.tenants.steps.scoring import ScoringTotals

ALLOWLIST_CHECK = "routing_messages_allowlisted"


@dg.asset(
    metadata=tables_written(
        "apac_tenant_score_snapshots",
        "apac_active_tenants",
        "apac_sales_owned_tenants",
        "apac_scoring_models",
    ),
    partitions_def=daily_partitions,
    deps=[routed_tenants],
    group_name=GROUP,
    backfill_policy=dg.BackfillPolicy.single_run(),
    check_specs=[
        dg.AssetCheckSpec(
            name=ALLOWLIST_CHECK,
            asset="tenant_scores",
            description=(
                "Every routing message has bucket active/sales_owned and no override other "
                "than P0 with reason hubspot_target_account (docs/pipeline.md); violations are "
                "rejected, not scored."
            ),
        )
    ],
)
def tenant_scores(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    pipeline: PipelineSettingsResource,
    scoring: ScoringModelResource,
) -> dg.MaterializeResult:
    """`total_score` (0–100) and priority for every routed tenant of both buckets, with a
    row per tenant in `apac_tenant_score_snapshots` holding the bucket and the per-signal
    contributions. Final priority is P0 only for HubSpot target accounts; the forced
    Sales-owned ids and retired tenants are not scored. Only the newest routed partition
    updates the bucket rows; an older one rewrites its score snapshots only. A tenant whose
    input did not change is not scored again: its stored score answers the day, its recency
    points moved to it."""
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.scoring import score_partition
    from morpheus_pipelines.tenants.steps.tenant_events import PartitionEventLogs

    model = scoring.model
    results = {}
    with PartitionEventLogs(warehouse.outputs()) as logs:
        for partition_key in context.partition_keys:
            results[partition_key] = score_partition(
                warehouse.session,
                partition_key=partition_key,
                run_id=context.run.run_id,
                model=model,
                batch_size=pipeline.chunk_size,
                log=context.log,
                events=logs.open(partition_key),
            )
    rejected = sum(r.rejected for r in results.values())
    reasons = _summed(r.rejection_reasons for r in results.values())
    return dg.MaterializeResult(
        metadata={
            **as_metadata(_metadata(results, model.version)),
            **event_file_links(logs.published),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=ALLOWLIST_CHECK,
                passed=rejected == 0,
                metadata=as_metadata({"rejected": rejected, "reasons": reasons}),
            )
        ],
    )


def _summed(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for count in counts:
        for key, n in count.items():
            total[key] = total.get(key, 0) + n
    return total


def _metadata(results: Mapping[str, "ScoringTotals"], model_version: str) -> dict[str, object]:
    scored = sum(r.scored for r in results.values())
    carried = sum(r.carried for r in results.values())
    return {
        "dagster/row_count": scored + carried,
        "score_model_version": model_version,
        # docs/scoring.md, "Incremental scoring": computed this run, and answered by the score
        # stored before because nothing they depend on changed but the passing of time.
        "tenants_scored": scored,
        "tenants_carried_forward": carried,
        "bucket_rows_updated": sum(
            r.rows_written.get(bucket, 0)
            for r in results.values()
            for bucket in ("active", "sales_owned")
        ),
        "carried_from": {k: r.carried_from for k, r in results.items() if r.carried_from} or None,
        "rejected": sum(r.rejected for r in results.values()),
        "by_bucket_and_priority": _summed(r.by_bucket_priority for r in results.values()),
        "duration_seconds": round(sum(r.seconds for r in results.values()), 3),
        "seconds_by_phase": {k: r.phases for k, r in results.items()}
        if len(results) > 1
        else next(iter(results.values())).phases,
        # False for a partition older than the newest routed one: its score snapshots were
        # rewritten, the live bucket rows were not (docs/partitions.md).
        "live_partitions": [k for k, r in results.items() if r.live],
        "history_only_partitions": [k for k, r in results.items() if not r.live],
    }
