"""``hubspot_outbox_delivery``: what Morpheus decided, written to HubSpot (docs/hubspot-outbox.md),
and ``sales_rep_call_lists``, the reps' daily call lists queued for it."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import dagster as dg

from morpheus_pipelines.assets.leads.intake import LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.steps.call_lists import refresh_call_lists
from morpheus_pipelines.crm.steps.hubspot_outbox import OutboxBacklog, drain_outbox, outbox_backlog
from morpheus_pipelines.platform.partitions import TIMEZONE
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

DELIVERY_KEY = dg.AssetKey("hubspot_outbox_delivery")
NOTHING_DEAD_CHECK = "no_outbox_row_dead"
# A row pending longer than this means the drain is not keeping up (or not running).
PENDING_TOO_LONG = timedelta(hours=1)


@dg.asset(
    deps=[LEADS],
    key=DELIVERY_KEY,
    group_name="hubspot",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written("hubspot_outbox", "leads", "follow_up_tasks", "activities"),
    check_specs=[
        dg.AssetCheckSpec(
            name=NOTHING_DEAD_CHECK,
            asset=DELIVERY_KEY,
            description="No outbox row has failed its last attempt (dead rows wait for "
            "`morpheus outbox retry`), and none has waited more than an hour.",
            blocking=False,
        )
    ],
    tags={"domain": "crm"},
)
def hubspot_outbox_delivery(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """The due rows of `hubspot_outbox`, kind by kind (contacts first, so the tasks and calls
    of a new lead find its contact), in HubSpot batch calls of ≤ 100; each answer settled row
    by row: done with the object's id, or failed with HubSpot's reason and retried after a
    back-off, dead after the last attempt. Launched by the `hubspot_outbox_sensor` when rows
    are due."""
    subscription_id = ownership.subscription()
    with hubspot.get_client(context.log) as client:
        report = drain_outbox(warehouse.session, client, subscription_id)
    if report.stopped:
        context.log.warning(f"HubSpot unavailable, drain stopped: {report.stopped}")
    backlog = outbox_backlog(warehouse.session, subscription_id)
    metadata = report.as_metadata() | {
        "backlog": _backlog_metadata(backlog),
        "oldest_pending_at": backlog.oldest_pending_at,
        "dagster/row_count": sum(report.written.values()),
    }
    return dg.MaterializeResult(
        metadata=as_metadata(metadata), check_results=[_check(backlog, datetime.now(UTC))]
    )


def _backlog_metadata(backlog: OutboxBacklog) -> dict[str, object]:
    return {
        "pending": backlog.pending,
        "due": backlog.due,
        "dead": backlog.dead,
        "done_since": backlog.done_since,
    }


def _check(backlog: OutboxBacklog, now: datetime) -> dg.AssetCheckResult:
    waited = now - backlog.oldest_pending_at if backlog.oldest_pending_at else timedelta(0)
    passed = backlog.dead == 0 and waited <= PENDING_TOO_LONG
    return dg.AssetCheckResult(
        check_name=NOTHING_DEAD_CHECK,
        passed=passed,
        severity=dg.AssetCheckSeverity.ERROR if backlog.dead else dg.AssetCheckSeverity.WARN,
        metadata=as_metadata(
            {
                "dead": backlog.dead,
                "dead_reasons": backlog.dead_reasons,
                "pending": backlog.pending,
                "oldest_pending_minutes": round(waited.total_seconds() / 60, 1),
            }
        ),
    )


@dg.asset(
    deps=["sales_reps"],
    group_name="ownership",
    kinds={"postgres"},
    metadata=tables_written("hubspot_outbox"),
    tags={"domain": "ownership"},
)
def sales_rep_call_lists(
    context: dg.AssetExecutionContext, ownership: OwnershipResource, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """Each active rep's call list of the day (the HubSpot contacts of their pending call
    tasks due today, in the schedule's time zone) queued for their HubSpot list
    (`sales_reps.hubspotCallSegmentId`, created when missing), and an empty list for each rep
    who left. Queued once per rep and day; `hubspot_outbox_delivery` writes them."""
    subscription_id = ownership.subscription()
    day = datetime.now(UTC).astimezone(ZoneInfo(TIMEZONE)).date()
    refresh = refresh_call_lists(warehouse.session, subscription_id, day, TIMEZONE)
    context.log.info(f"call lists of {day}: {refresh.as_metadata()}")
    return dg.MaterializeResult(
        metadata=as_metadata(refresh.as_metadata() | {"dagster/row_count": refresh.queued})
    )


hubspot_outbox_job = dg.define_asset_job(
    name="hubspot_outbox_job",
    selection=dg.AssetSelection.assets(hubspot_outbox_delivery),
    description="Write the due rows of the HubSpot outbox to HubSpot.",
)

call_list_job = dg.define_asset_job(
    name="call_list_job",
    selection=dg.AssetSelection.assets(sales_rep_call_lists),
    description="Queue each rep's call list of the day.",
)

# Starts STOPPED like the ownership schedules: on once reps and their tasks are set up.
call_list_schedule = dg.ScheduleDefinition(
    name="call_list_schedule",
    job=call_list_job,
    cron_schedule="0 7 * * 1-5",
    execution_timezone=TIMEZONE,
    description="07:00 Monday to Friday: the day's call lists, before the reps start.",
)
