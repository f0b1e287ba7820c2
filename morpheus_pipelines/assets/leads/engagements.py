"""``hubspot_engagements``: HubSpot calls, emails, meetings and notes on the one timeline
(docs/leads.md, "The HubSpot engagement sync")."""

import dagster as dg

from morpheus_pipelines.assets.leads.intake import LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.steps.engagement_sync import sync_engagements
from morpheus_pipelines.platform.partitions import TIMEZONE
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    deps=[LEADS],
    group_name="leads",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written("activities"),
    tags={"domain": "leads"},
)
def hubspot_engagements(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """Engagements modified since the last run (minus a one-hour overlap, for HubSpot's
    search index) upserted into `activities` on `(subscriptionId, externalId)`: re-running
    over an overlapping window creates no duplicate. A call by a rep (its `hubspot_owner_id`)
    counts as engagement for the automations; the AI dialer's does not. An engagement whose
    contact matches a lead's email joins that lead's timeline."""
    subscription_id = ownership.subscription()
    with hubspot.get_client(context.log) as client:
        sync = sync_engagements(client, warehouse.session, subscription_id)
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "subscription_id": str(subscription_id),
                "window_start": sync.window_start,
                "watermark": sync.watermark,
                "engagements_by_type": {k: v for k, v in sync.counts.items() if k != "pages"},
                "pages": sync.counts["pages"],
                "dagster/row_count": sum(v for k, v in sync.counts.items() if k != "pages"),
            }
        )
    )


hubspot_engagement_job = dg.define_asset_job(
    name="hubspot_engagement_job",
    selection=dg.AssetSelection.assets(hubspot_engagements),
    description="HubSpot engagements onto the unified timeline.",
)

hubspot_engagement_schedule = dg.ScheduleDefinition(
    job=hubspot_engagement_job,
    cron_schedule="*/15 * * * *",
    execution_timezone=TIMEZONE,
    description="Every 15 minutes: the automations see a rep's HubSpot call soon after it.",
)
