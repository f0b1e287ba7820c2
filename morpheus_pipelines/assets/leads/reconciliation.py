"""``hubspot_reconciliation``: what missed webhooks would have changed, re-read from HubSpot
every hour (docs/hubspot-webhooks.md, "The reconciliation")."""

import dagster as dg

from morpheus_pipelines.assets.leads.intake import LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.steps.hubspot_reconciliation import (
    receives_webhooks,
    reconcile_with_hubspot,
)
from morpheus_pipelines.platform.partitions import TIMEZONE
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    deps=[LEADS],
    group_name="leads",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written("contacts", "leads", "sales_reps", "target_emails", "configs"),
    tags={"domain": "leads"},
)
def hubspot_reconciliation(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """Contacts and deals HubSpot changed since each cursor (minus a one-hour overlap), applied
    as their webhooks would have been: a contact's owner and `call_assigned_to` onto our
    contacts and its leads, an opt-out through the out-of-order guard (never an opt-in), a
    closed won/lost deal closing its contacts' open leads through the deal worker. Only what
    differs is written, so a second run, or a run after the webhooks arrived, changes nothing.
    Each cursor (in `configs`) moves only after its part was read whole."""
    subscription_id = ownership.subscription()
    with hubspot.get_client(context.log) as client:
        run = reconcile_with_hubspot(client, warehouse.session, subscription_id)
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "subscription_id": str(subscription_id),
                "contacts_window_start": run.contacts_window_start,
                "contacts_cursor": run.contacts_cursor,
                "deals_window_start": run.deals_window_start,
                "deals_cursor": run.deals_cursor,
                "changes": dict(run.counts) or None,
                "dagster/row_count": run.changes,
            }
        )
    )


hubspot_reconciliation_job = dg.define_asset_job(
    name="hubspot_reconciliation_job",
    selection=dg.AssetSelection.assets(hubspot_reconciliation),
    description="Re-read the contacts and deals HubSpot changed and apply what missed webhooks "
    "would have.",
)


@dg.schedule(
    job=hubspot_reconciliation_job,
    cron_schedule="20 * * * *",
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Hourly, when MORPHEUS_SUBSCRIPTION_ID is set and its subscription receives "
    "HubSpot webhooks (a HubSpot portal id); skipped otherwise.",
)
def hubspot_reconciliation_schedule(
    context: dg.ScheduleEvaluationContext,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.RunRequest | dg.SkipReason:
    if not ownership.subscription_id:
        return dg.SkipReason("MORPHEUS_SUBSCRIPTION_ID is not set")
    if not receives_webhooks(warehouse.session, ownership.subscription()):
        return dg.SkipReason("the subscription has no HubSpot portal id: no webhooks to miss")
    return dg.RunRequest()
