"""A sensor that reads Lead Ads leads' answers soon after their webhook created them
(docs/senders.md, "Meta")."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.crm.steps.lead_contact_retrieval import retrieval_backlog
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

JOB = "lead_contact_retrieval_job"


@dg.sensor(
    job_name=JOB,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests lead_contact_retrieval_job when a lead's answers are due from its "
    "sender (a new Lead Ads lead, or one whose retry time has come).",
)
def lead_contact_retrieval_sensor(
    context: dg.SensorEvaluationContext, ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    if not ownership.subscription_id:
        return dg.SkipReason("MORPHEUS_SUBSCRIPTION_ID is not set")
    backlog = retrieval_backlog(warehouse.session, ownership.subscription())
    if not backlog.due:
        return dg.SkipReason(f"no lead's answers are due ({backlog.pending} waiting)")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"contacts-{stamp}", tags={"due": str(backlog.due)})]
    )
