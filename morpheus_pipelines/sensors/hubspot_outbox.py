"""A sensor that drains the HubSpot outbox soon after a decision queues a write
(docs/hubspot-outbox.md)."""

import dagster as dg

from morpheus_pipelines.crm.steps.hubspot_outbox import outbox_backlog
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.drains import one_drain_at_a_time

JOB = "hubspot_outbox_job"


@dg.sensor(
    job_name=JOB,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests hubspot_outbox_job when outbox rows are due and no drain is queued "
    "or running; a drain takes every due row, so one at a time is enough.",
)
def hubspot_outbox_sensor(
    context: dg.SensorEvaluationContext, ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    if not ownership.subscription_id:
        return dg.SkipReason("MORPHEUS_SUBSCRIPTION_ID is not set: there is no outbox to drain")
    backlog = outbox_backlog(warehouse.session, ownership.subscription())
    if not backlog.due:
        return dg.SkipReason(f"no outbox row is due ({backlog.pending} pending later)")
    return one_drain_at_a_time(context, JOB, "outbox")
