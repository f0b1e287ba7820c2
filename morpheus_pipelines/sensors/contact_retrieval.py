"""A sensor that reads Lead Ads leads' answers soon after their webhook created them
(docs/senders.md, "Meta")."""

import dagster as dg

from morpheus_pipelines.crm.steps.lead_contact_retrieval import retrieval_backlog
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.drains import one_drain_at_a_time

JOB = "lead_contact_retrieval_job"


@dg.sensor(
    job_name=JOB,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests lead_contact_retrieval_job when a lead's answers are due from its "
    "sender (a new Lead Ads lead, or one whose retry time has come) and no retrieval is "
    "queued or running.",
)
def lead_contact_retrieval_sensor(
    context: dg.SensorEvaluationContext, ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    if not ownership.subscription_id:
        return dg.SkipReason("MORPHEUS_SUBSCRIPTION_ID is not set")
    backlog = retrieval_backlog(warehouse.session, ownership.subscription())
    if not backlog.due:
        return dg.SkipReason(f"no lead's answers are due ({backlog.pending} waiting)")
    return one_drain_at_a_time(context, JOB, "contacts", due=str(backlog.due))
