"""Jobs and schedules: the daily pipeline at 07:30 CST, the weekly report on Monday morning,
and the HubSpot snapshot freshness check every 15 minutes."""

import dagster as dg

from morpheus_pipelines.assets.hubspot import snapshot_freshness

DAILY_ASSETS = (
    "hubspot_target_accounts",
    "tenant_candidates",
    "enriched_tenants",
    "routed_tenants",
    "tenant_scores",
    "daily_summary",
)

apac_daily_job = dg.define_asset_job(
    name="apac_daily_job",
    selection=dg.AssetSelection.assets(*DAILY_ASSETS),
    description="Snapshot, tenant selection, enrichment, routing, scores and the Daily "
    "Summary for one CST day.",
)

apac_weekly_job = dg.define_asset_job(
    name="apac_weekly_job",
    selection=dg.AssetSelection.assets("weekly_metrics"),
    description="Weekly Metrics for one Monday-to-Sunday CST week.",
)

# Schedules start STOPPED, as 002's rollout asks (smoke-test at full volume first); turn them
# on in the UI. A daily partition is a finished CST day: at 07:30 on day D+1 the schedule
# runs partition D.
apac_daily_schedule = dg.build_schedule_from_partitioned_job(
    apac_daily_job, hour_of_day=7, minute_of_hour=30
)

# On Monday at 08:30 CST, the week that ended on Sunday.
apac_weekly_schedule = dg.build_schedule_from_partitioned_job(
    apac_weekly_job, hour_of_day=8, minute_of_hour=30
)

# The freshness check on its own: it only reads `apac_hubspot_target_sync_state` (no HubSpot
# call, nothing materialised), so the check in the UI turns red when the daily job stops
# instead of staying green until someone runs it with the asset.
snapshot_freshness_job = dg.define_asset_job(
    name="snapshot_freshness_job",
    selection=dg.AssetSelection.checks(snapshot_freshness),
    description="Evaluates the snapshot_freshness check of hubspot_target_accounts (reads the "
    "warehouse only; materialises nothing).",
)

# Unlike the pipeline schedules this one starts RUNNING: it is read-only and cheap.
snapshot_freshness_schedule = dg.ScheduleDefinition(
    name="snapshot_freshness_schedule",
    job=snapshot_freshness_job,
    cron_schedule="*/15 * * * *",
    execution_timezone="Asia/Shanghai",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-evaluates snapshot_freshness every 15 minutes.",
)
