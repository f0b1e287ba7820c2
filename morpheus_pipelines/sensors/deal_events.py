"""A sensor that applies HubSpot deal webhook events within a minute of their arrival
(docs/hubspot-webhooks.md, "Deal events")."""

from datetime import UTC, datetime, timedelta

import dagster as dg

from morpheus_pipelines.crm.steps.hubspot_deals import deal_event_backlog
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

# Events a run left pending (HubSpot failing) are tried again this often.
RETRY_EVERY = timedelta(minutes=5)


def run_key(subscription_id: str, newest_pending_id: int, now: datetime) -> str:
    """One run per newest pending event, and one more per retry slot while events stay
    pending: a new event starts a run at once, a failed one is retried without a run every
    tick."""
    slot = int(now.timestamp() // RETRY_EVERY.total_seconds())
    return f"{subscription_id}:{newest_pending_id}:{slot}"


@dg.sensor(
    job_name="hubspot_deal_events_job",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests hubspot_deal_events_job when deal webhook events are pending; one "
    "run per newest pending event, retried every 5 minutes while they stay pending.",
)
def pending_deal_events(
    context: dg.SensorEvaluationContext, ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    if not ownership.subscription_id:
        return dg.SkipReason("MORPHEUS_SUBSCRIPTION_ID is not set")
    backlog = deal_event_backlog(warehouse.session, ownership.subscription())
    if not backlog.pending:
        return dg.SkipReason("no deal event is pending")
    key = run_key(ownership.subscription_id, backlog.newest_id or 0, datetime.now(UTC))
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=key, tags={"pending": str(backlog.pending)})]
    )
