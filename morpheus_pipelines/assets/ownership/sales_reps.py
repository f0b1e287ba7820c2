"""``sales_reps``: the mirror of HubSpot's owners (docs/ownership.md, "The sales-rep mirror")."""

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.steps.sales_rep_mirror import mirror_owners
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

ASSET_KEY = dg.AssetKey("sales_reps")
REFRESH_CHECK = "owners_mirror_refreshed"
HAND_OVER_CHECK = "departed_reps_hold_no_work"


@dg.asset(
    key=ASSET_KEY,
    group_name="ownership",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written(
        "sales_reps", "leads", "follow_up_tasks", "rep_hand_overs", "hubspot_outbox"
    ),
    check_specs=[
        dg.AssetCheckSpec(
            name=REFRESH_CHECK,
            asset=ASSET_KEY,
            description="Every owner page was read and applied: the mirror is current.",
            blocking=False,
        ),
        dg.AssetCheckSpec(
            name=HAND_OVER_CHECK,
            asset=ASSET_KEY,
            description="No inactive rep still owns an open lead or a live follow-up task: "
            "every rep who left has handed over.",
            blocking=False,
        ),
    ],
    tags={"domain": "ownership"},
)
def sales_reps(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """The subscription's reps, mirrored from `GET /crm/v3/owners` (active and archived, every
    page). Matched on email; an owner that disappears or is archived deactivates its rep
    (never deleted); Nooks ids, list ids and profiles are kept. A failed page changes nothing
    and turns the check red; assignment then uses the reps as they were. A rep who left hands
    over in the same run: their open leads re-routed, their live tasks moved, their call list
    emptied (docs/ownership.md, "When a rep leaves")."""
    subscription_id = ownership.subscription()
    with hubspot.get_client(context.log) as client:
        outcome = mirror_owners(client, warehouse.session, subscription_id)
    if outcome.succeeded:
        context.log.info(f"owners mirrored into sales_reps: {outcome.counts}")
        for hand_over in outcome.hand_overs:
            t = hand_over.tally
            context.log.info(
                f"rep {hand_over.sales_rep_id} handed over: {t.leads} open lead(s) "
                f"({t.leads_waiting} waiting), {t.tasks} live task(s)"
            )
    else:
        context.log.warning(f"owners mirror failed ({outcome.error}); sales_reps unchanged")
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "subscription_id": str(subscription_id),
                "owners_active": outcome.owners_active,
                "owners_archived": outcome.owners_archived,
                "owners_without_email": outcome.without_email,
                "duplicate_owner_emails": outcome.duplicates,
                "ai_owners_skipped": outcome.not_human,
                **outcome.counts,
                "requests": outcome.requests,
                "retries": outcome.retries,
                "duration_seconds": round(outcome.duration_seconds, 3),
                "error": outcome.error,
                "reps_handed_over": len(outcome.hand_overs),
                "leads_handed_over": sum(h.tally.leads for h in outcome.hand_overs),
                "tasks_handed_over": sum(h.tally.tasks for h in outcome.hand_overs),
            }
        ),
        check_results=[
            dg.AssetCheckResult(
                check_name=REFRESH_CHECK,
                passed=outcome.succeeded,
                severity=dg.AssetCheckSeverity.ERROR,
                metadata=as_metadata({"error": outcome.error}),
            ),
            dg.AssetCheckResult(
                check_name=HAND_OVER_CHECK,
                passed=outcome.departed_with_work == 0,
                severity=dg.AssetCheckSeverity.ERROR,
                metadata=as_metadata({"inactive_reps_with_work": outcome.departed_with_work}),
            ),
        ],
    )
