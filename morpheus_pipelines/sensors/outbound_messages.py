"""A sensor that sends queued messages soon after they are queued (docs/messages.md)."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.crm.steps.message_sending import message_backlog
from morpheus_pipelines.resources.warehouse import WarehouseResource

JOB = "outbound_messages_job"
_ACTIVE = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


@dg.sensor(
    job_name=JOB,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests outbound_messages_job when queued messages are due and no drain "
    "is queued or running; a drain takes every due message, so one at a time is enough.",
)
def outbound_messages_sensor(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    backlog = message_backlog(warehouse.session)
    due = sum(backlog.due.values())
    if not due:
        return dg.SkipReason("no queued message is due")
    running = context.instance.get_runs(
        filters=dg.RunsFilter(job_name=JOB, statuses=_ACTIVE), limit=1
    )
    if running:
        return dg.SkipReason(f"a drain is queued or running ({running[0].run_id})")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"messages-{stamp}")])
