"""``daily_summary``: what Sales should hear about on a CST day (docs/reports.md).

Reads ``apac_active_tenants`` only (through ``repositories.reports``): Sales-owned tenants
never appear in a report, whatever their priority.
"""

from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.partitions import daily_partitions
from morpheus_pipelines.reports.daily import build_daily_summary
from morpheus_pipelines.reports.figures import ActiveTenantFigures, DailySummary
from morpheus_pipelines.reports.files import write_daily_report
from morpheus_pipelines.reports.markdown import render_daily_markdown
from morpheus_pipelines.repositories import (
    DailySummaryRepository,
    RoutingDecisionRepository,
)
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.services.hubspot_snapshot import read_snapshot_state

_daily = DailySummaryRepository()
_decisions = RoutingDecisionRepository()

GROUP = "reports"
# Written in the scoring module; referenced by key so this module does not import it.
TENANT_SCORES = dg.AssetKey("tenant_scores")


def file_paths(files: dict[str, Path]) -> dict[str, dg.MetadataValue]:
    return {f"file_{name}": dg.MetadataValue.path(str(path)) for name, path in files.items()}


def _summarise(warehouse: WarehouseResource, list_id: str, partition_key: str) -> DailySummary:
    generated_at = datetime.now(UTC)
    with warehouse.session() as session:
        _daily.begin_consistent_read(session)
        figures = ActiveTenantFigures(
            changed=_daily.changed_top_priorities(session, partition_key=partition_key),
            priority_counts=_daily.priority_counts(session),
            reason_counts=_daily.priority_reason_counts(session),
            match_method_counts=_daily.match_method_counts(session),
            entered_counts=_daily.entered_counts(session, partition_key=partition_key),
            transitions=_daily.priority_transitions(session, partition_key=partition_key),
            retired=_daily.retired_count(session, partition_key=partition_key),
            state_partition=_daily.state_partition(session),
        )
        snapshot = read_snapshot_state(session, list_id, now=generated_at)
    return build_daily_summary(partition_key, figures, snapshot, generated_at=generated_at)


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
) -> dg.MaterializeResult:
    """P0/P1 tenants that are new or changed priority on the partition's CST day, and why
    (`apac_daily_summary_tenants`), with the day's figures (`apac_daily_summary_metrics`).

    Reads `apac_active_tenants` only (docs/reports.md): HubSpot target accounts appear as P0, and
    Sales-owned tenants never appear. "Why" is the HubSpot match (method and company) or the
    score. Also records tenants per priority, per match method and per reason, tenants that
    entered the Active list (new or from Sales-owned) and the HubSpot snapshot status.
    Writes `summary.html`, `summary.csv`, `metrics.csv` and `summary.md` under
    `$MORPHEUS_HOME/reports/daily/<partition>/`. Re-running replaces the partition's rows;
    unchanged rows stay identical. Figures are the Active table's state when the summary
    runs, so it belongs right after `tenant_scores` of the same partition. A backfill of a
    day older than the newest routed partition keeps that day's stored summary: the Active
    table no longer shows that day (docs/partitions.md).
    """
    per_partition: dict[str, dict] = {}
    written = listed = 0
    summary = files = None
    for partition_key in context.partition_keys:
        with warehouse.session() as session:
            newest = _decisions.newest_partition(session)
            superseded = newest is not None and newest > partition_key
            if superseded and _daily.has_partition(session, partition_key=partition_key):
                context.log.info(
                    f"{partition_key}: kept the stored Daily Summary; partition {newest} owns "
                    "the live buckets, which no longer show this day"
                )
                per_partition[partition_key] = {"kept": True, "live_partition": newest}
                continue
        summary = _summarise(warehouse, target_list.list_id, partition_key)
        with warehouse.session() as session:
            written += _daily.replace_partition(
                session,
                summary.tenant_rows(),
                partition_key=partition_key,
                run_id=context.run.run_id,
            )
            written += _daily.replace_metrics(
                session,
                summary.metrics_rows(),
                partition_key=partition_key,
                run_id=context.run.run_id,
            )
        files = write_daily_report(summary, warehouse.home)
        per_partition[partition_key] = summary.counts()
        listed += len(summary.tenants)
        if summary.late:
            context.log.warning(
                f"{partition_key}: apac_active_tenants already reflects partition "
                f"{summary.state_partition}; the summary shows that later state"
            )
        context.log.info(f"{partition_key}: {summary.counts()}")
    if summary is None:
        return dg.MaterializeResult(
            metadata=as_metadata(
                {"dagster/row_count": 0, "rows_written": 0, "partitions": per_partition}
            )
        )
    return dg.MaterializeResult(
        metadata={
            "summary": dg.MetadataValue.md(render_daily_markdown(summary, files=files)),
            **as_metadata(
                {
                    "dagster/row_count": listed,
                    **summary.counts(),
                    "snapshot_sync_id": summary.snapshot.sync_id,
                    "state_partition": summary.state_partition,
                    "rows_written": written,
                    "partitions": per_partition if len(per_partition) > 1 else None,
                }
            ),
            **file_paths(files),
        }
    )
