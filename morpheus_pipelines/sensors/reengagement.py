"""A sensor that assigns new re-engagement segment members soon after they arrive
(docs/ownership.md)."""

import dagster as dg

from morpheus_pipelines.crm.steps.reengagement import backlog
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.sensor(
    job_name="reengagement_job",
    minimum_interval_seconds=60,
    description="Requests reengagement_job when segment members are waiting or write-backs "
    "to HubSpot are pending; one run per newest waiting member.",
)
def new_segment_members(
    context: dg.SensorEvaluationContext, ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    if not ownership.subscription_id:
        return dg.SkipReason("MORPHEUS_SUBSCRIPTION_ID is not set")
    waiting = backlog(warehouse.session, ownership.subscription())
    if waiting.empty:
        return dg.SkipReason("no new segment members and no pending write-back")
    # The key changes only when a newer member arrives or the pending write-backs change, so
    # work that stays waiting (a campaign-target batch aborted for want of a rep, HubSpot
    # down) does not start a run every minute; ids only grow, so a key never comes back.
    key = (
        f"{ownership.subscription_id}:{waiting.newest_member_id}:"
        f"{waiting.oldest_pending_id}:{waiting.pending_write_backs}"
    )
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(
                run_key=key,
                tags={"new_members": str(sum(waiting.new_members.values()))},
            )
        ]
    )
