"""``daily_summary``: what Sales should hear about on a CST day (docs/reports.md)."""

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.crm.steps.hubspot_outbox import outbox_operations_note
from morpheus_pipelines.crm.steps.rep_hand_over import hand_over_operations_note
from morpheus_pipelines.crm.steps.waiting_leads import waiting_operations_note
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.outputs import Published
from morpheus_pipelines.platform.partitions import daily_partitions
from morpheus_pipelines.platform.report_notes import OperationsNote
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

if TYPE_CHECKING:
    from morpheus_pipelines.tenants.steps.report_publishing import DailyPublication

GROUP = "reports"
# Written in the scoring module; referenced by key so this module does not import it.
TENANT_SCORES = dg.AssetKey("tenant_scores")


# A source of one Operations note: it reads what it reports on from the warehouse, for the
# subscription that owns the HubSpot portal, as of ``now``.
NoteSource = Callable[[SessionFactory, uuid.UUID, datetime], OperationsNote]

# The CRM side's notes: the HubSpot outbox, leads waiting for an owner.
CRM_NOTE_SOURCES: tuple[NoteSource, ...] = (
    outbox_operations_note,
    waiting_operations_note,
    hand_over_operations_note,
)


def operations_notes(
    warehouse: WarehouseResource,
    ownership: OwnershipResource,
    sources: Sequence[NoteSource] = CRM_NOTE_SOURCES,
    *,
    now: datetime | None = None,
) -> list[OperationsNote]:
    """The Daily Summary's Operations notes: what went wrong on the CRM side that a person
    must act on. None when no subscription is configured (`MORPHEUS_SUBSCRIPTION_ID` unset):
    the CRM side is not in use, and the summary says nothing about it."""
    if not sources or not ownership.subscription_id:
        return []
    subscription = ownership.subscription()
    moment = now or datetime.now(UTC)
    return [_note(source, warehouse, subscription, moment) for source in sources]


def _note(
    source: NoteSource, warehouse: WarehouseResource, subscription: uuid.UUID, now: datetime
) -> OperationsNote:
    """One source's note; a source that cannot be read is itself a note, so the summary is
    still published."""
    try:
        return source(warehouse.session, subscription, now)
    except Exception as exc:  # the report must not fail on one of its notes
        name = getattr(source, "__name__", "a note")
        return OperationsNote(
            title=name.replace("_", " "),
            severity="error",
            lines=(f"could not be read: {type(exc).__name__}",),
        )


def file_links(files: dict[str, Published]) -> dict[str, dg.MetadataValue]:
    """A link per published file (``file_html``, …): what a reader opens from the UI, on
    whichever host ran the step (docs/reports.md, "Where reports go")."""
    links = {f"file_{name}": dg.MetadataValue.url(file.link) for name, file in files.items()}
    if files:
        first = next(iter(files.values()))
        links["stored_at"] = dg.MetadataValue.text(first.stored.rsplit("/", 1)[0] + "/")
    return links


@dg.asset(
    metadata=tables_written("apac_daily_summary_tenants", "apac_daily_summary_metrics"),
    partitions_def=daily_partitions,
    deps=[TENANT_SCORES],
    group_name=GROUP,
    kinds={"html"},
    backfill_policy=dg.BackfillPolicy.single_run(),
)
def daily_summary(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    target_list: TargetListResource,
    ownership: OwnershipResource,
) -> dg.MaterializeResult:
    """P0/P1 tenants that are new or changed priority on the partition's CST day, and why
    (`apac_daily_summary_tenants`), with the day's figures (`apac_daily_summary_metrics`).

    Reads `apac_active_tenants` only (docs/reports.md): HubSpot target accounts appear as P0, and
    Sales-owned tenants never appear. "Why" is the HubSpot match (method and company) or the
    score. Also records tenants per priority, per match method and per reason, tenants that
    entered the Active list (new or from Sales-owned) and the HubSpot snapshot status.
    Opens with an Operations section when the CRM side has something to report (the HubSpot
    outbox: updates that could not be written, writes waiting too long), as of the run.
    Writes `summary.html`, `summary.csv`, `metrics.csv`, `notes.csv` and `summary.md` under
    `$MORPHEUS_REPORTS_URL/daily/<partition>/`, linked from the metadata. Re-running
    replaces the partition's rows; unchanged rows stay identical. Figures are the Active
    table's state when the summary runs, so it belongs right after `tenant_scores` of the
    same partition. A backfill of a day older than the newest routed partition keeps that
    day's stored summary: the Active table no longer shows that day (docs/partitions.md).
    """
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.report_publishing import publish_daily_summary

    # Gathered once: they describe the CRM side now, whichever days the run covers.
    notes = operations_notes(warehouse, ownership)
    for note in notes:
        if note.severity != "ok":
            context.log.warning(f"Operations: {note.title} ({note.severity})")
    outputs = warehouse.outputs()
    days: list[DailyPublication] = []
    published: dict[str, Published] = {}
    for partition_key in context.partition_keys:
        day = publish_daily_summary(
            warehouse.session,
            list_id=target_list.list_id,
            partition_key=partition_key,
            run_id=context.run.run_id,
            home=outputs.staging_home,
            notes=notes,
        )
        days.append(day)
        if not day.kept:
            published = outputs.publish_all(day.files)
        if day.kept:
            context.log.info(
                f"{partition_key}: kept the stored Daily Summary; partition "
                f"{day.live_partition} owns the live buckets, which no longer show this day"
            )
            continue
        if day.summary.late:
            context.log.warning(
                f"{partition_key}: apac_active_tenants already reflects partition "
                f"{day.summary.state_partition}; the summary shows that later state"
            )
        context.log.info(f"{partition_key}: {day.summary.counts()}")
    return dg.MaterializeResult(metadata=_daily_metadata(days, published))


def _daily_metadata(days: "list[DailyPublication]", files: dict[str, Published]) -> dict:
    """The last published day in full (Markdown, counts, files); every day's counts under
    ``partitions`` when the run covered several."""
    from morpheus_pipelines.tenants.reports.markdown import render_daily_markdown

    per_partition = {
        d.partition_key: {"kept": True, "live_partition": d.live_partition}
        if d.kept
        else d.summary.counts()
        for d in days
    }
    published = [d for d in days if not d.kept]
    figures = {
        "rows_written": sum(d.rows_written for d in days),
        "partitions": per_partition if len(days) > 1 else None,
    }
    if not published:
        return as_metadata({"dagster/row_count": 0, **figures, "partitions": per_partition})
    last = published[-1]
    return {
        "summary": dg.MetadataValue.md(
            render_daily_markdown(last.summary, files={n: f.link for n, f in files.items()})
        ),
        **as_metadata(
            {
                "dagster/row_count": sum(d.summary.tenant_count for d in published),
                **last.summary.counts(),
                "snapshot_sync_id": last.summary.snapshot.sync_id,
                "state_partition": last.summary.state_partition,
                **figures,
            }
        ),
        **file_links(files),
    }
