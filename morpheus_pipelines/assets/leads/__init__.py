"""The lead slice: what happens after `morpheus serve` created a lead (docs/leads.md)."""

import dagster as dg

from morpheus_pipelines.assets.leads.attribution import (
    lead_attribution,
    lead_attribution_job,
    lead_attribution_schedule,
)
from morpheus_pipelines.assets.leads.automations import AUTOMATION_FIRINGS
from morpheus_pipelines.assets.leads.engagements import (
    hubspot_engagement_job,
    hubspot_engagement_schedule,
    hubspot_engagements,
)
from morpheus_pipelines.assets.leads.follow_up import lead_duplicates, lead_enrichment, lead_scores

lead_follow_up_job = dg.define_asset_job(
    name="lead_follow_up_job",
    selection=dg.AssetSelection.assets(lead_enrichment, lead_scores, lead_duplicates),
    description="Enrich, score and check for duplicates the leads intake created.",
)

defs = dg.Definitions(
    assets=[
        lead_enrichment,
        lead_scores,
        lead_duplicates,
        lead_attribution,
        hubspot_engagements,
        AUTOMATION_FIRINGS,
    ],
    jobs=[lead_follow_up_job, lead_attribution_job, hubspot_engagement_job],
    schedules=[lead_attribution_schedule, hubspot_engagement_schedule],
)
