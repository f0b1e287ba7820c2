"""``enriched_tenants``: email-domain class and Domain Intelligence per candidate."""

import contextlib

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.assets.tenants.selection import GROUP, tenant_candidates
from morpheus_pipelines.platform.partitions import daily_partitions
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from morpheus_pipelines.resources.pipeline import PipelineSettingsResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    metadata=tables_written("apac_enriched_tenants"),
    partitions_def=daily_partitions,
    deps=[tenant_candidates],
    group_name=GROUP,
    retry_policy=EXTERNAL_SERVICE_RETRY,
    backfill_policy=dg.BackfillPolicy.single_run(),
)
def enriched_tenants(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    domain_intelligence: DomainIntelligenceResource,
    pipeline: PipelineSettingsResource,
) -> dg.MaterializeResult:
    """Email-domain class and Domain Intelligence results per candidate
    (`apac_enriched_tenants`).

    When `DOMAIN_INTELLIGENCE_BASE_URL` is unset or the service fails, the tenants are
    recorded as `unavailable` and the pipeline continues: routing never waits on enrichment.
    Forced Sales-owned tenants are not enriched. An answer for unchanged inputs younger than
    `DOMAIN_INTELLIGENCE_MAX_AGE_DAYS` (default 30; 0 = never) is reused, not asked again.
    """
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.partition_enrichment import enrich_partitions

    client = domain_intelligence.get_client(context.log)
    with client if client is not None else contextlib.nullcontext():
        totals = enrich_partitions(
            warehouse.session,
            client,
            partition_keys=context.partition_keys,
            run_id=context.run.run_id,
            chunk_size=pipeline.chunk_size,
            max_age_days=domain_intelligence.max_age_days,
            log=context.log,
        )
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "dagster/row_count": totals.tenants,
                "service_configured": client is not None,
                "by_enrichment_status": totals.status_counts,
                "requests": totals.requests,
                "tenants_asked": totals.asked,
                "tenants_reused": totals.reused,
                "failed_batches": totals.failed_batches,
                "rows_written": totals.rows_written,
            }
        )
    )
