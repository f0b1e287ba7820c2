"""A sensor that drains the HubSpot outbox soon after a decision queues a write
(docs/hubspot-outbox.md)."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.crm.steps.hubspot_outbox import outbox_backlog
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

JOB = "hubspot_outbox_job"
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
    running = context.instance.get_runs(
        filters=dg.RunsFilter(job_name=JOB, statuses=_ACTIVE), limit=1
    )
    if running:
        return dg.SkipReason(f"a drain is queued or running ({running[0].run_id})")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"outbox-{stamp}")])
