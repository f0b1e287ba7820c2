"""A sensor that gives waiting leads an owner within a minute of a rep becoming assignable
(docs/leads.md, "Who owns a lead")."""

import hashlib

import dagster as dg

from morpheus_pipelines.crm.steps.waiting_leads import waiting_leads
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.sensor(
    job_name="waiting_lead_owners_job",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests waiting_lead_owners_job when open leads wait for an owner and "
    "someone in the subscription is assignable.",
)
def waiting_lead_owners_sensor(
    context: dg.SensorEvaluationContext, ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    if not ownership.subscription_id:
        return dg.SkipReason("MORPHEUS_SUBSCRIPTION_ID is not set")
    left = waiting_leads(warehouse.session, ownership.subscription())
    if not left.waiting:
        return dg.SkipReason("no lead waits for an owner")
    if not left.anyone_assignable:
        return dg.SkipReason(f"{left.waiting} lead(s) wait, but nobody is assignable")
    key = run_key(ownership.subscription_id, left.waiting, left.assignable_rep_ids)
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=key, tags={"waiting": str(left.waiting)})]
    )


def run_key(subscription_id: str, waiting: int, assignable_rep_ids: tuple[int, ...]) -> str:
    """A new run when the waiting leads or the assignable reps change, and only then: a lead
    that waits for a rep of its own pool does not start a run every tick because a rep of
    another pool is assignable."""
    reps = hashlib.sha256(",".join(map(str, assignable_rep_ids)).encode()).hexdigest()[:16]
    return f"{subscription_id}:{waiting}:{reps}"
