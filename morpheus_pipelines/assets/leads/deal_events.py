"""``hubspot_deal_events``: the deal webhook events applied, so a deal closed won or lost in
HubSpot closes its contacts' open leads (docs/hubspot-webhooks.md, "Deal events"), and the
check that none waits too long."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.assets.leads.intake import LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.rules.hubspot_deals import PENDING_TOO_LONG, pending_health
from morpheus_pipelines.crm.steps.hubspot_deals import (
    apply_pending_deal_events,
    deal_event_backlog,
)
from morpheus_pipelines.platform.partitions import TIMEZONE
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

ASSET_KEY = dg.AssetKey("hubspot_deal_events")
PENDING_CHECK = "deal_events_not_stuck"


@dg.asset(
    deps=[LEADS],
    key=ASSET_KEY,
    group_name="leads",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written("hubspot_webhook_events", "leads", "sales_reps"),
    tags={"domain": "leads"},
)
def hubspot_deal_events(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """The `pending` `deal.propertyChange` events settled once each: a deal moved to closed
    won or closed lost closes the open leads of its contacts as `won`/`lost` (through the path
    `morpheus lead close` takes, so each rep's `openLeads` goes down once per lead), in the
    transaction that marks its event `applied`; an event that changes nothing (another stage,
    a deal owner, a superseded change, a deal without open leads) is `ignored` with its
    `outcome`. A HubSpot failure leaves the unread events pending for the next run."""
    subscription_id = ownership.subscription()
    with hubspot.get_client(context.log) as client:
        run = apply_pending_deal_events(client, warehouse.session, subscription_id)
    if run.error:
        context.log.warning(f"HubSpot failed; deal events left pending: {run.error}")
    left = deal_event_backlog(warehouse.session, subscription_id)
    return dg.MaterializeResult(
        metadata=as_metadata(
            {
                "subscription_id": str(subscription_id),
                "events_applied": run.statuses.get("applied", 0),
                "events_ignored": run.statuses.get("ignored", 0),
                "ignored_because": dict(run.ignored) or None,
                "leads_closed": sum(run.leads_closed.values()),
                "leads_closed_by_status": dict(run.leads_closed) or None,
                "events_still_pending": left.pending,
                "batches": run.batches,
                "hubspot_error": run.error,
                "dagster/row_count": run.settled,
            }
        )
    )


@dg.asset_check(
    asset=ASSET_KEY,
    name=PENDING_CHECK,
    blocking=False,
    description="Red when a deal webhook event has waited more than "
    f"{int(PENDING_TOO_LONG.total_seconds() // 60)} minutes to be applied (the worker is "
    "stopped, or HubSpot keeps failing it).",
)
def deal_events_not_stuck(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Reads the warehouse only: every subscription's pending deal events (events of a portal
    no deployment's worker reads wait forever, and that is worth seeing too)."""
    backlog = deal_event_backlog(warehouse.session, None)
    passed, summary = pending_health(backlog.oldest_received_at, datetime.now(UTC))
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR,
        description=summary,
        metadata=as_metadata(
            {
                "pending": backlog.pending,
                "oldest_received_at": backlog.oldest_received_at,
                "max_wait_minutes": int(PENDING_TOO_LONG.total_seconds() // 60),
            }
        ),
    )


hubspot_deal_events_job = dg.define_asset_job(
    name="hubspot_deal_events_job",
    selection=dg.AssetSelection.assets(hubspot_deal_events),
    description="Apply the pending HubSpot deal webhook events (started by the "
    "pending_deal_events sensor).",
)

# The check on its own, so it turns red when the sensor or the worker stops, instead of
# staying green until a worker run evaluates it.
deal_events_check_job = dg.define_asset_job(
    name="deal_events_check_job",
    selection=dg.AssetSelection.checks(deal_events_not_stuck),
    description="Evaluates the deal_events_not_stuck check of hubspot_deal_events (reads the "
    "warehouse only; materialises nothing).",
)

# Read-only and cheap, so it starts RUNNING.
deal_events_check_schedule = dg.ScheduleDefinition(
    name="deal_events_check_schedule",
    job=deal_events_check_job,
    cron_schedule="*/15 * * * *",
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-evaluates deal_events_not_stuck every 15 minutes.",
)
