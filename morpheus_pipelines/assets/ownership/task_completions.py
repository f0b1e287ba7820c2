"""``hubspot_task_completions``: follow-up tasks a rep completed in HubSpot, completed here
(docs/hubspot-outbox.md, "Tasks completed in HubSpot")."""

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.steps.hubspot_task_sync import sync_task_completions
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    group_name="ownership",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written("follow_up_tasks"),
    tags={"domain": "ownership"},
)
def hubspot_task_completions(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """HubSpot tasks modified since the last run (minus a one-hour overlap); each one the
    outbox wrote and a rep completed in HubSpot completes its follow-up task. Runs before the
    re-engagement assignments and the escalations, so neither acts on a task that is done."""
    subscription_id = ownership.subscription()
    with hubspot.get_client(context.log) as client:
        sync = sync_task_completions(client, warehouse.session, subscription_id)
    return dg.MaterializeResult(
        metadata=as_metadata(sync.as_metadata() | {"dagster/row_count": sync.completed_here})
    )
