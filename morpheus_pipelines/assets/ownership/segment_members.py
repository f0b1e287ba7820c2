"""``reengagement_segment_members``: the segments' members read from their HubSpot contact
lists (docs/ownership.md, "Where segment members come from")."""

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.steps.sales_rep_mirror import require_subscription
from morpheus_pipelines.crm.steps.segment_lists import SegmentListsRun, read_segment_lists
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

ASSET_KEY = dg.AssetKey("reengagement_segment_members")
LISTS_CHECK = "every_segment_list_read"


@dg.asset(
    key=ASSET_KEY,
    deps=["sales_reps"],
    group_name="ownership",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written("reengagement_segment_members", "contacts"),
    check_specs=[
        dg.AssetCheckSpec(
            name=LISTS_CHECK,
            asset=ASSET_KEY,
            description="Every segment's configured HubSpot list is a contact list and was read "
            "to completion (a list that failed wrote nothing; the next run reads it again).",
            blocking=False,
        )
    ],
    tags={"domain": "ownership"},
)
def reengagement_segment_members(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """For each segment with a list (`morpheus segment set … --list-id`): every page of
    `GET /crm/v3/lists/{listId}/memberships`, the members' contacts read in batches of ≤ 100,
    then one transaction that upserts the contacts, adds the members newly on the list and
    marks those who left (kept, never assigned). A contact joins a segment once, so re-runs
    enrol nobody twice."""
    subscription_id = ownership.subscription()
    with warehouse.session() as session:
        require_subscription(session, subscription_id)
    with hubspot.get_client(context.log) as client:
        run = read_segment_lists(client, warehouse.session, subscription_id)
    for read in run.lists:
        if read.succeeded:
            context.log.info(f"{read.segment} (list {read.list_id}): {read.counts()}")
        else:
            context.log.error(f"{read.segment} (list {read.list_id}) not read: {read.error}")
    return dg.MaterializeResult(metadata=as_metadata(_metadata(run)), check_results=[_check(run)])


def _metadata(run: SegmentListsRun) -> dict[str, object]:
    return {
        "subscription_id": str(run.subscription_id),
        "lists_by_segment": {r.segment: r.list_id for r in run.lists},
        "counts_by_segment": {r.segment: r.counts() for r in run.lists if r.succeeded},
        "members_read": sum(r.read for r in run.lists),
        "members_new": sum(r.new for r in run.lists),
        "members_left": sum(r.left for r in run.lists),
        "contacts_upserted": sum(r.contacts_upserted for r in run.lists),
        "failed_lists": run.failed or None,
        "dagster/row_count": sum(r.new + r.back + r.left for r in run.lists),
    }


def _check(run: SegmentListsRun) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=LISTS_CHECK,
        passed=run.succeeded,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata=as_metadata(
            {"lists_read": sum(r.succeeded for r in run.lists), "failed": run.failed or None}
        ),
    )
