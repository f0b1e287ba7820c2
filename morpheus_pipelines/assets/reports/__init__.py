"""The reports slice: the Daily Summary and the Weekly Metrics, and the weekly job with its
Monday schedule (docs/reports.md)."""

import dagster as dg

from morpheus_pipelines.assets.reports.daily import daily_summary
from morpheus_pipelines.assets.reports.schedules import apac_weekly_job, apac_weekly_schedule
from morpheus_pipelines.assets.reports.weekly import weekly_metrics

defs = dg.Definitions(
    assets=[daily_summary, weekly_metrics],
    jobs=[apac_weekly_job],
    schedules=[apac_weekly_schedule],
)
