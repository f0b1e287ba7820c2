"""The ownership jobs and their schedules (docs/ownership.md)."""

import dagster as dg

from morpheus_pipelines.platform.partitions import TIMEZONE

reengagement_job = dg.define_asset_job(
    name="reengagement_job",
    selection=dg.AssetSelection.assets(
        "sales_reps",
        "reengagement_segment_members",
        "hubspot_task_completions",
        "reengagement_assignments",
    ),
    description="Mirror HubSpot's owners into sales_reps, read the segments' HubSpot lists "
    "into reengagement_segment_members, complete the tasks reps completed in HubSpot, then "
    "assign the new members and write the owners back to HubSpot.",
)

follow_up_escalation_job = dg.define_asset_job(
    name="follow_up_escalation_job",
    selection=dg.AssetSelection.assets("hubspot_task_completions", "follow_up_escalations"),
    description="Complete the tasks reps completed in HubSpot, then escalate PENDING "
    "follow-up tasks a day or more past due.",
)

# Like the pipeline schedules these start STOPPED: turn them on once the subscription, the
# reps' lists and the alert webhook are configured.
reengagement_schedule = dg.ScheduleDefinition(
    name="reengagement_schedule",
    job=reengagement_job,
    cron_schedule="*/30 8-20 * * 1-5",
    execution_timezone=TIMEZONE,
    description="Every 30 minutes in working hours (Asia/Shanghai), Monday to Friday.",
)

follow_up_escalation_schedule = dg.ScheduleDefinition(
    name="follow_up_escalation_schedule",
    job=follow_up_escalation_job,
    cron_schedule="0 * * * *",
    execution_timezone=TIMEZONE,
    description="Hourly; a task reaches stage k when it is k days overdue (docs/ownership.md).",
)
