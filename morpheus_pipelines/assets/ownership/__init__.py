"""The ownership slice: the sales-rep mirror, the re-engagement segments and escalation
(docs/ownership.md)."""

import dagster as dg

from morpheus_pipelines.assets.ownership.escalations import follow_up_escalations
from morpheus_pipelines.assets.ownership.reengagement import reengagement_assignments
from morpheus_pipelines.assets.ownership.sales_reps import sales_reps
from morpheus_pipelines.assets.ownership.schedules import (
    follow_up_escalation_job,
    follow_up_escalation_schedule,
    reengagement_job,
    reengagement_schedule,
)
from morpheus_pipelines.assets.ownership.segment_members import reengagement_segment_members
from morpheus_pipelines.assets.ownership.task_completions import hubspot_task_completions

defs = dg.Definitions(
    assets=[
        sales_reps,
        reengagement_segment_members,
        hubspot_task_completions,
        reengagement_assignments,
        follow_up_escalations,
    ],
    jobs=[reengagement_job, follow_up_escalation_job],
    schedules=[reengagement_schedule, follow_up_escalation_schedule],
)
