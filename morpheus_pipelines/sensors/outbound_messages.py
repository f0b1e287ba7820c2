"""A sensor that sends queued messages soon after they are queued (docs/messages.md)."""

import dagster as dg

from morpheus_pipelines.crm.steps.message_sending import message_backlog
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.drains import one_drain_at_a_time

JOB = "outbound_messages_job"


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
    return one_drain_at_a_time(context, JOB, "messages")
