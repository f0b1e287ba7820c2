"""``routed_tenants``: each candidate in exactly one bucket, with its decision and the
routing checks (docs/pipeline.md; what a backfill changes: docs/partitions.md)."""

from typing import TYPE_CHECKING

import dagster as dg

from morpheus_pipelines.assets.hubspot.snapshot import ASSET_KEY as HUBSPOT_TARGET_ACCOUNTS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.tenants.enrichment import enriched_tenants
from morpheus_pipelines.assets.tenants.selection import GROUP
from morpheus_pipelines.platform.outputs import Published
from morpheus_pipelines.platform.partitions import daily_partitions
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.pipeline import PipelineSettingsResource
from morpheus_pipelines.resources.routing import TenantRoutingResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

if TYPE_CHECKING:
    from morpheus_pipelines.tenants.steps.routing_batches import SnapshotView
    from morpheus_pipelines.tenants.steps.tenant_routing import PartitionRouting

ROUTING_CHECKS = {
    "buckets_disjoint": "No tenant is in both apac_active_tenants and apac_sales_owned_tenants.",
    "every_candidate_routed_once": "Every candidate of the partition has exactly one decision, "
    "and every decision (but retirements) is a candidate's.",
    "decisions_match_buckets": "Every routed tenant of the partition that owns the live "
    "buckets is, unretired, in exactly the bucket its decision names.",
    "forced_ids_sales_owned": "Every forced id that is a candidate is Sales-owned.",
}
# Not an error in the data: a configured forced id the source does not know (a typo, or a
# tenant that was deleted). WARN, naming the ids.
FORCED_IDS_CHECK = "forced_ids_in_source"


@dg.asset(
    metadata=tables_written(
        "apac_active_tenants",
        "apac_sales_owned_tenants",
        "apac_routing_decisions",
        "apac_routing_inputs",
        "apac_routing_states",
        "apac_hubspot_prepared_snapshots",
    ),
    partitions_def=daily_partitions,
    deps=[enriched_tenants, HUBSPOT_TARGET_ACCOUNTS],
    group_name=GROUP,
    backfill_policy=dg.BackfillPolicy.single_run(),
    check_specs=[
        dg.AssetCheckSpec(name=name, asset="routed_tenants", description=text)
        for name, text in ROUTING_CHECKS.items()
    ]
    + [
        dg.AssetCheckSpec(
            name=FORCED_IDS_CHECK,
            asset="routed_tenants",
            description="Every FORCED_SALES_OWNED_TENANT_IDS entry exists in the source.",
        )
    ],
)
def routed_tenants(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    target_list: TargetListResource,
    routing: TenantRoutingResource,
    pipeline: PipelineSettingsResource,
) -> dg.MaterializeResult:
    """Each candidate in exactly one bucket: `apac_active_tenants` or
    `apac_sales_owned_tenants`, with the decision in `apac_routing_decisions`.

    Precedence (docs/pipeline.md): forced ids → Sales-owned P0 directly (no enrichment, no
    scoring); a
    HubSpot target-account match (when the snapshot is `fresh` or `stale`) → Active with a P0
    override; an exact APAC Sales owner → Sales-owned; else Active. Each batch is one
    transaction that upserts the destination, carries score and tracking fields over, and
    deletes the tenant from the other table. The newest routed partition owns the live
    buckets and retires the rows it no longer selects; an older partition (a backfill)
    rewrites only its decision record. Checks and metadata cover every day of the run.
    """
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.routing_batches import load_snapshot
    from morpheus_pipelines.tenants.steps.tenant_events import PartitionEventLogs
    from morpheus_pipelines.tenants.steps.tenant_routing import route_partition

    with warehouse.session() as session:
        snapshot = load_snapshot(
            session, list_id=target_list.list_id, run_ids=_lineage(context), log=context.log
        )
    context.log.info(
        f"snapshot {snapshot.state.status}"
        + (f", sync {snapshot.state.sync_id}" if snapshot.state.sync_id else "")
        + (f", prepared for matching: {snapshot.prepared}" if snapshot.prepared else "")
    )
    days: dict[str, PartitionRouting] = {}
    with PartitionEventLogs(warehouse.outputs()) as logs:
        for partition_key in context.partition_keys:
            days[partition_key] = route_partition(
                warehouse.session,
                snapshot=snapshot,
                partition_key=partition_key,
                run_id=context.run.run_id,
                sales_emails=routing.sales_emails,
                forced_ids=routing.forced_ids,
                batch_size=pipeline.chunk_size,
                events=logs.open(partition_key),
                log=context.log,
            )
    return dg.MaterializeResult(
        metadata={
            **as_metadata(routing_metadata(days, snapshot)),
            **event_file_links(logs.published),
        },
        check_results=routing_check_results(days),
    )


def event_file_links(files: dict[str, Published]) -> dict[str, dg.MetadataValue]:
    """The last partition's per-tenant event file, linked (docs/observability.md)."""
    if not files:
        return {}
    return {"tenant_events": dg.MetadataValue.url(files[list(files)[-1]].link)}


def _lineage(context: dg.AssetExecutionContext) -> list[str]:
    """This run and, for a re-execution, its parent and root: a snapshot any of them
    refreshed is this run's (re-executing from failure skips the snapshot step)."""
    run = context.run
    return [r for r in (run.run_id, run.parent_run_id, run.root_run_id) if r]


def _day_metadata(day: "PartitionRouting") -> dict:
    summary = day.summary
    return {
        "decisions": summary["totals"]["decisions"],
        "live": day.live,
        "by_bucket": summary["by_bucket"],
        "by_rule": summary["by_rule"],
        "by_match_method": summary["by_match_method"],
        "by_email_domain_class": summary["by_email_domain_class"],
        "moved": summary["totals"]["moved"],
        "moved_from": summary["by_moved_from"],
        "ambiguous": summary["totals"]["ambiguous"],
        "rejected": summary["totals"]["rejected"],
        "forced_routed": day.forced,
        "retired": day.retired,
        "orphan_decisions_removed": day.orphans_removed,
        # docs/pipeline.md, "Incremental routing": decided this run, copied unchanged, and why.
        "tenants_decided": day.totals.tenants,
        "bucket_rows_written": day.totals.written,
        "tenants_carried_forward": day.carried,
        "routing_plan": day.plan,
        "seconds_by_phase": day.phases,
    }


def routing_metadata(days: "dict[str, PartitionRouting]", snapshot: "SnapshotView") -> dict:
    """The last day's figures at the top level (what the UI plots per partition), and every
    day's under ``partitions`` when the run covered several."""
    last = _day_metadata(days[list(days)[-1]])
    return {
        "dagster/row_count": sum(d.summary["totals"]["decisions"] for d in days.values()),
        "snapshot_status": snapshot.state.status,
        "snapshot_sync_id": snapshot.state.sync_id,
        # docs/pipeline.md, "The prepared snapshot": read back, or prepared by this run.
        "snapshot_prepared": snapshot.prepared,
        **{k: v for k, v in last.items() if k != "decisions"},
        "free_mail": last["by_email_domain_class"].get("free", 0),
        "partitions": {k: _day_metadata(d) for k, d in days.items()} if len(days) > 1 else None,
    }


def routing_check_results(days: "dict[str, PartitionRouting]") -> list[dg.AssetCheckResult]:
    """One result per check for the whole run: passed only when every day passed, with the
    violations per day."""
    results = []
    for name in ROUTING_CHECKS:
        per_day = {k: d.check_violations[name] for k, d in days.items()}
        results.append(
            dg.AssetCheckResult(
                check_name=name,
                passed=not any(per_day.values()),
                metadata=as_metadata(
                    {
                        "violations": sum(per_day.values()),
                        "violations_by_partition": per_day if len(per_day) > 1 else None,
                    }
                ),
            )
        )
    missing = sorted({i for d in days.values() for i in d.missing_forced_ids})
    results.append(
        dg.AssetCheckResult(
            check_name=FORCED_IDS_CHECK,
            passed=not missing,
            severity=dg.AssetCheckSeverity.WARN,
            description=(
                f"forced ids not in the source: {', '.join(missing)}" if missing else None
            ),
            metadata=as_metadata({"missing_forced_ids": missing}),
        )
    )
    return results
