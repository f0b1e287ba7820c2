"""The reports slice: the Daily Summary and the Weekly Metrics, the weekly job with its
Monday schedule, their delivery to the managers, and the Daily Summary's deadline check at
08:30 (docs/reports.md)."""

import dagster as dg

from morpheus_pipelines.assets.reports.daily import daily_summary
from morpheus_pipelines.assets.reports.deadline import (
    daily_summary_deadline_job,
    daily_summary_deadline_schedule,
    produced_by_deadline,
)
from morpheus_pipelines.assets.reports.delivery import (
    daily_summary_delivery,
    report_delivery_sensor,
    weekly_metrics_delivery,
)
from morpheus_pipelines.assets.reports.schedules import apac_weekly_job, apac_weekly_schedule
from morpheus_pipelines.assets.reports.weekly import weekly_metrics

defs = dg.Definitions(
    assets=[daily_summary, weekly_metrics, daily_summary_delivery, weekly_metrics_delivery],
    asset_checks=[produced_by_deadline],
    jobs=[apac_weekly_job, daily_summary_deadline_job],
    schedules=[apac_weekly_schedule, daily_summary_deadline_schedule],
    sensors=[report_delivery_sensor],
)
