"""The single ``dg.Definitions`` of the code location, assembled explicitly."""

import dagster as dg

from morpheus_pipelines.assets.hubspot import hubspot_target_accounts, snapshot_freshness
from morpheus_pipelines.assets.reports import daily_summary, weekly_metrics
from morpheus_pipelines.assets.scores import tenant_scores
from morpheus_pipelines.assets.tenants import enriched_tenants, routed_tenants, tenant_candidates
from morpheus_pipelines.jobs import (
    apac_daily_job,
    apac_daily_schedule,
    apac_weekly_job,
    apac_weekly_schedule,
    snapshot_freshness_job,
    snapshot_freshness_schedule,
)
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from morpheus_pipelines.resources.env import env_int_or_default, env_or_default
from morpheus_pipelines.resources.hubspot import HubSpotResource, TargetListResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.routing import TenantRoutingResource
from morpheus_pipelines.resources.scoring import ScoringModelResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.alerts import hubspot_snapshot_health, run_failure_alert
from morpheus_pipelines.settings import load_settings

warehouse = WarehouseResource(
    database_url=env_or_default("MORPHEUS_DATABASE_URL"),
    home=env_or_default("MORPHEUS_HOME"),
    source_database_url=env_or_default("MORPHEUS_SOURCE_DATABASE_URL"),
    source_schema=env_or_default("MORPHEUS_SOURCE_SCHEMA"),
)

hubspot = HubSpotResource(
    base_url=env_or_default("HUBSPOT_BASE_URL"),
    private_app_token=env_or_default("HUBSPOT_PRIVATE_APP_TOKEN"),
    request_timeout=load_settings().hubspot_request_timeout,
    retry_count=env_int_or_default("HUBSPOT_RETRY_COUNT"),
    requests_per_10s=env_int_or_default("HUBSPOT_REQUESTS_PER_10S"),
)

domain_intelligence = DomainIntelligenceResource(
    base_url=env_or_default("DOMAIN_INTELLIGENCE_BASE_URL"),
)

routing = TenantRoutingResource(
    apac_sales_emails=env_or_default("APAC_SALES_EMAILS"),
    forced_sales_owned_tenant_ids=env_or_default("FORCED_SALES_OWNED_TENANT_IDS"),
)

RESOURCES = {
    "warehouse": warehouse,
    "hubspot": hubspot,
    "target_list": TargetListResource(list_id=env_or_default("HUBSPOT_TARGET_LIST_ID")),
    "domain_intelligence": domain_intelligence,
    "routing": routing,
    "scoring": ScoringModelResource(),
    "notifier": NotifierResource(webhook_url=env_or_default("MORPHEUS_ALERT_WEBHOOK_URL")),
}

defs = dg.Definitions(
    assets=[
        hubspot_target_accounts,
        tenant_candidates,
        enriched_tenants,
        routed_tenants,
        tenant_scores,
        daily_summary,
        weekly_metrics,
    ],
    asset_checks=[snapshot_freshness],
    jobs=[apac_daily_job, apac_weekly_job, snapshot_freshness_job],
    schedules=[apac_daily_schedule, apac_weekly_schedule, snapshot_freshness_schedule],
    sensors=[run_failure_alert, hubspot_snapshot_health],
    resources=RESOURCES,
)
