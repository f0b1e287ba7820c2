"""The slow path after a lead is created: ``lead_enrichment``, ``lead_scores``,
``lead_duplicates`` (docs/leads.md, "After creation"). Intake never waits for them."""

import dagster as dg

from morpheus_pipelines.assets.leads.intake import LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.steps.lead_follow_up import enrich_leads, find_duplicates, score_leads
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    deps=[LEADS],
    group_name="leads",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    kinds={"api"},
    metadata=tables_written("lead_enrichments"),
    tags={"domain": "leads"},
)
def lead_enrichment(
    context: dg.AssetExecutionContext,
    domain_intelligence: DomainIntelligenceResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """New leads' email domains asked of Domain Intelligence (as for tenants). Personal and
    missing emails are not sent; without the service, or when a batch fails, the lead is
    `unavailable` and asked again next run."""
    client = domain_intelligence.get_client(context.log)
    try:
        counts = enrich_leads(warehouse.session, client)
    finally:
        if client is not None:
            client.close()
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "leads_by_status": dict(counts),
                "dagster/row_count": sum(counts.values()),
                "domain_intelligence_configured": client is not None,
            }
        )
    )


@dg.asset(
    deps=[lead_enrichment],
    group_name="leads",
    metadata=tables_written("lead_scores"),
    tags={"domain": "leads"},
)
def lead_scores(warehouse: WarehouseResource) -> dg.MaterializeResult:
    """A first, explainable 0–100 score per enriched lead, each point with its reason; re-scored
    when the enrichment changes. The owner never depends on it."""
    counts = score_leads(warehouse.session)
    return dg.MaterializeResult(metadata=as_metadata({"dagster/row_count": counts["scored"]}))


@dg.asset(
    deps=[LEADS],
    group_name="leads",
    metadata=tables_written(
        "lead_duplicates", "leads", "sales_reps", "activities", "hubspot_outbox"
    ),
    tags={"domain": "leads"},
)
def lead_duplicates(warehouse: WarehouseResource) -> dg.MaterializeResult:
    """New leads matched against the subscription's earlier open leads (email, E.164 phone)
    and the CRM's contacts (`ContactRepository.find_existing`: email, then phone). A duplicate
    of an earlier open lead takes its owner and its form joins that lead's timeline; every
    match is recorded and counted (`duplicate_of_open_lead`)."""
    counts = find_duplicates(warehouse.session)
    return dg.MaterializeResult(
        metadata=as_metadata(
            {"leads_by_match": dict(counts), "dagster/row_count": sum(counts.values())}
        )
    )
