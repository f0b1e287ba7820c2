"""Jobs and schedules: the daily pipeline at 07:30 CST, the weekly report on Monday morning."""

import dagster as dg

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
