"""``lead_attribution``: who and what gets credit for won leads, five ways (docs/leads.md,
"Attribution")."""

import dagster as dg

from morpheus_pipelines.assets.leads.intake import ACTIVITIES, LEADS
from morpheus_pipelines.assets.metadata import as_metadata
from morpheus_pipelines.assets.reports.daily import file_links
from morpheus_pipelines.crm.reports.attribution import render_attribution_markdown
from morpheus_pipelines.crm.steps.lead_attribution import publish_lead_attribution
from morpheus_pipelines.platform.partitions import TIMEZONE
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(deps=[LEADS, ACTIVITIES], group_name="leads", kinds={"html"}, tags={"domain": "leads"})
def lead_attribution(
    ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Credit for every won lead of the workspace (`MORPHEUS_SUBSCRIPTION_ID`) split among
    the touches before the win, under first-touch, last-touch, linear, position-based
    (40/20/40) and time-decay (7-day half-life) models side by side, per channel and per
    owner, each with a sentence saying how it splits, and where the models disagree most.
    Writes `attribution.md`, `attribution.html` (chart embedded) and `credit_by_channel.png`
    under `$MORPHEUS_REPORTS_URL/attribution/<date>/`, linked from the metadata.
    """
    subscription_id = ownership.subscription()
    outputs = warehouse.outputs()
    published = publish_lead_attribution(
        warehouse.session, subscription_id, home=outputs.staging_home
    )
    attribution = published.attribution
    return dg.MaterializeResult(
        metadata={
            "report": dg.MetadataValue.md(
                render_attribution_markdown(attribution, published.generated_at)
            ),
            **as_metadata(
                {
                    "subscription_id": str(subscription_id),
                    "won_leads": attribution.won_leads,
                    "won_leads_without_touches": attribution.leads_without_touches,
                    "credit_by_channel": attribution.by_channel,
                }
            ),
            **file_links(outputs.publish_all(published.files)),
        }
    )


lead_attribution_job = dg.define_asset_job(
    name="lead_attribution_job",
    selection=dg.AssetSelection.assets(lead_attribution),
    description="The Lead Attribution report for sales managers.",
)

lead_attribution_schedule = dg.ScheduleDefinition(
    job=lead_attribution_job,
    cron_schedule="30 8 * * 1-5",
    execution_timezone=TIMEZONE,
    description="Every working morning, before the sales managers' stand-up.",
)
