"""``tenant_candidates``: the partition's APAC tenants, selected from the source."""

import dagster as dg
from pydantic import Field

from morpheus_pipelines.assets.hubspot.snapshot import ASSET_KEY as HUBSPOT_TARGET_ACCOUNTS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.tenants.source import SOURCE_TENANTS
from morpheus_pipelines.platform.partitions import daily_partitions
from morpheus_pipelines.resources.routing import TenantRoutingResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

GROUP = "tenants"


class TenantSelectionConfig(dg.Config):
    """Run configuration of `tenant_candidates`."""

    limit: int | None = Field(
        default=None,
        description="Select only the first N tenants by id (a small first invocation, "
        "docs/partitions.md). A limited selection never retires the tenants it leaves out.",
    )


@dg.asset(
    metadata=tables_written("apac_tenant_candidates", "apac_candidate_selections"),
    partitions_def=daily_partitions,
    deps=[HUBSPOT_TARGET_ACCOUNTS, SOURCE_TENANTS],
    group_name=GROUP,
    backfill_policy=dg.BackfillPolicy.single_run(),
)
def tenant_candidates(
    context: dg.AssetExecutionContext,
    config: TenantSelectionConfig,
    warehouse: WarehouseResource,
    routing: TenantRoutingResource,
) -> dg.MaterializeResult:
    """APAC tenants to route for the partition's CST day (`apac_tenant_candidates`).

    Active candidates are the current state (region APAC, status not `free_trial`, `new_user`
    or `closing`); signups are those created in the partition's CST day `[00:00, 24:00)`. A
    tenant in both is selected once as `signup`. The `FORCED_SALES_OWNED_TENANT_IDS` present
    in the source are selected whatever their status or region. Runs after the HubSpot
    snapshot refresh (docs/pipeline.md). Re-running replaces the partition's rows.
    """
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.tenant_selection import select_partition, source_read

    # A source in the warehouse database is read in place, not streamed through this process.
    source_in_warehouse = warehouse.source_in_warehouse()
    per_partition = {}
    for partition_key in context.partition_keys:
        counts = select_partition(
            warehouse.source_session,
            warehouse.session,
            source_in_warehouse=source_in_warehouse,
            schema=warehouse.source_schema,
            partition_key=partition_key,
            run_id=context.run.run_id,
            forced_ids=routing.forced_ids,
            limit=config.limit,
        )
        per_partition[partition_key] = counts
        context.log.info(f"{partition_key}: {counts}")
    last = per_partition[context.partition_keys[-1]]
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "dagster/row_count": sum(c["total"] for c in per_partition.values()),
                "active_candidates": last["active"],
                "signups": last["signup"],
                "forced_sales_owned": last["forced_sales_owned"],
                "rejected": last["rejected"],
                "limit": config.limit,
                "source_read": source_read(last["source_read_in_place"]),
                "rows_written": sum(c["rows_written"] for c in per_partition.values()),
                "partitions": per_partition if len(per_partition) > 1 else None,
            }
        )
    )
