"""The weekly job (Weekly Metrics) and its Monday-morning schedule."""

import dagster as dg

apac_weekly_job = dg.define_asset_job(
    name="apac_weekly_job",
    selection=dg.AssetSelection.assets("weekly_metrics"),
    description="Weekly Metrics for one Monday-to-Sunday CST week.",
)

# On Monday at 08:30 CST, the week that ended on Sunday.
apac_weekly_schedule = dg.build_schedule_from_partitioned_job(
    apac_weekly_job, hour_of_day=8, minute_of_hour=30
)
