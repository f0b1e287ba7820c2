"""``waiting_lead_owners``: open leads that waited for an owner given one as soon as someone is
assignable (docs/leads.md, "Who owns a lead"), and the check that is red while any waits."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.assets.leads.intake import LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.crm.rules.waiting_leads import waiting_health
from morpheus_pipelines.crm.steps.waiting_leads import give_waiting_leads_owners, waiting_leads
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

ASSET_KEY = dg.AssetKey("waiting_lead_owners")
WAITING_CHECK = "no_lead_waits_for_an_owner"


@dg.asset(
    deps=[LEADS],
    key=ASSET_KEY,
    group_name="leads",
    metadata=tables_written("leads", "sales_reps", "hubspot_outbox"),
    tags={"domain": "leads"},
)
def waiting_lead_owners(
    ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """The open leads nobody could own at intake (`owner_state` `waiting`), oldest first, given
    the owner ladder's owner (a pool member, charged; else the pool's or the subscription's
    fallback rep), each new owner queued as the HubSpot contact's owner (`CONTACT_OWNER`)."""
    subscription_id = ownership.subscription()
    run = give_waiting_leads_owners(warehouse.session, subscription_id)
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "subscription_id": str(subscription_id),
                "leads_assigned": run.assigned,
                "leads_to_fallback_reps": run.fallback,
                "leads_still_waiting": run.still_waiting,
                "dagster/row_count": run.assigned + run.fallback,
            }
        )
    )


@dg.asset_check(
    asset=ASSET_KEY,
    name=WAITING_CHECK,
    blocking=False,
    description="Red while an open lead has no owner (nobody in its pool, no pool fallback "
    "and no subscription fallback rep is assignable).",
)
def no_lead_waits_for_an_owner(
    ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    left = waiting_leads(warehouse.session, ownership.subscription())
    passed, summary = waiting_health(left.waiting, left.oldest_created_at, datetime.now(UTC))
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=summary,
        metadata=as_metadata(
            {
                "waiting": left.waiting,
                "oldest_created_at": left.oldest_created_at,
                "anyone_assignable": left.anyone_assignable,
            }
        ),
    )


waiting_lead_owners_job = dg.define_asset_job(
    name="waiting_lead_owners_job",
    selection=dg.AssetSelection.assets(waiting_lead_owners),
    description="Give the waiting leads an owner (started by the waiting_leads sensor).",
)
