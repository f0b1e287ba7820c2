"""``lead_contact_retrieval``: the answers of leads whose sender keeps them (Meta Lead Ads),
read from the Graph API after the lead got its owner (docs/senders.md, "Meta"), and the check
that none was lost."""

from datetime import UTC, datetime, timedelta

import dagster as dg

from morpheus_pipelines.assets.leads.intake import LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.repositories.lead_contact_retrievals import RetrievalBacklog
from morpheus_pipelines.crm.steps.lead_contact_retrieval import (
    retrieval_backlog,
    retrieve_lead_contacts,
)
from morpheus_pipelines.resources.meta import MetaGraphResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

ASSET_KEY = dg.AssetKey("lead_contact_retrieval")
CHECK = "no_lead_contact_lost"
# A lead without its answers for longer than this is one a rep cannot call.
PENDING_TOO_LONG = timedelta(hours=1)


@dg.asset(
    deps=[LEADS],
    key=ASSET_KEY,
    group_name="leads",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    kinds={"meta"},
    metadata=tables_written("leads", "lead_contact_retrievals"),
    check_specs=[
        dg.AssetCheckSpec(
            name=CHECK,
            asset=ASSET_KEY,
            description="No lead's answers failed their last attempt, and none has waited "
            "more than an hour (the Graph API down, or META_ACCESS_TOKEN unset).",
            blocking=False,
        )
    ],
    tags={"domain": "leads"},
)
def lead_contact_retrieval(
    context: dg.AssetExecutionContext,
    meta_graph: MetaGraphResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """The due `lead_contact_retrievals`: each lead's answers read from the Graph API
    (`GET /{leadgen_id}`), filling its empty email, phone and names (normalised as intake
    stores them) and adding the other answers to its payload; never its owner. A failure the
    API may recover from is retried with back-off (1 min doubling to 1 h, 8 attempts); a lead
    Meta will not serve fails at once. Launched by `lead_contact_retrieval_sensor`."""
    subscription_id = ownership.subscription()
    client = meta_graph.get_client()
    if client is None:
        context.log.warning("META_ACCESS_TOKEN is not set: Lead Ads answers wait")
    try:
        report = retrieve_lead_contacts(warehouse.session, client, subscription_id)
    finally:
        if client is not None:
            client.close()
    backlog = retrieval_backlog(warehouse.session, subscription_id)
    metadata = report.as_metadata() | {
        "pending": backlog.pending,
        "failed_for_good": backlog.failed,
        "dagster/row_count": report.completed,
    }
    return dg.MaterializeResult(
        metadata=as_metadata(metadata), check_results=[_check(backlog, datetime.now(UTC))]
    )


def _check(backlog: RetrievalBacklog, now: datetime) -> dg.AssetCheckResult:
    waited = now - backlog.oldest_pending_at if backlog.oldest_pending_at else timedelta(0)
    return dg.AssetCheckResult(
        check_name=CHECK,
        passed=backlog.failed == 0 and waited <= PENDING_TOO_LONG,
        severity=dg.AssetCheckSeverity.ERROR if backlog.failed else dg.AssetCheckSeverity.WARN,
        metadata=as_metadata(
            {
                "failed": backlog.failed,
                "pending": backlog.pending,
                "oldest_pending_minutes": round(waited.total_seconds() / 60, 1),
            }
        ),
    )


lead_contact_retrieval_job = dg.define_asset_job(
    name="lead_contact_retrieval_job",
    selection=dg.AssetSelection.assets(lead_contact_retrieval),
    description="Read the answers of Lead Ads leads from the Graph API.",
)
