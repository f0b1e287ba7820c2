"""The tenants slice: selection, enrichment, routing and scores for a CST day, and the daily
job with its 07:30 CST schedule (docs/pipeline.md, docs/partitions.md)."""

import dagster as dg

from morpheus_pipelines.assets.tenants.enrichment import enriched_tenants
from morpheus_pipelines.assets.tenants.routing import routed_tenants
from morpheus_pipelines.assets.tenants.schedules import apac_daily_job, apac_daily_schedule
from morpheus_pipelines.assets.tenants.scores import tenant_scores
from morpheus_pipelines.assets.tenants.selection import tenant_candidates
from morpheus_pipelines.assets.tenants.source import SOURCE_TENANTS

defs = dg.Definitions(
    assets=[SOURCE_TENANTS, tenant_candidates, enriched_tenants, routed_tenants, tenant_scores],
    jobs=[apac_daily_job],
    schedules=[apac_daily_schedule],
)
