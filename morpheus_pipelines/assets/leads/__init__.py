"""The lead slice: what happens after `morpheus serve` created a lead (docs/leads.md)."""

import dagster as dg

from morpheus_pipelines.assets.leads.follow_up import lead_duplicates, lead_enrichment, lead_scores
from morpheus_pipelines.sensors.leads import new_leads

lead_follow_up_job = dg.define_asset_job(
    name="lead_follow_up_job",
    selection=dg.AssetSelection.assets(lead_enrichment, lead_scores, lead_duplicates),
    description="Enrich, score and check for duplicates the leads intake created.",
)

defs = dg.Definitions(
    assets=[lead_enrichment, lead_scores, lead_duplicates],
    jobs=[lead_follow_up_job],
    sensors=[new_leads],
)
