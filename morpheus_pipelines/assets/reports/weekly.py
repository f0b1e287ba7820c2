"""``weekly_metrics``: the week's trends from its seven Daily Summaries (docs/reports.md)."""

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.reports.daily import GROUP, daily_summary, file_paths
from morpheus_pipelines.partitions import weekly_partitions
from morpheus_pipelines.reports.files import write_weekly_report
from morpheus_pipelines.reports.markdown import render_weekly_markdown
from morpheus_pipelines.reports.weekly import build_weekly_metrics, week_days
from morpheus_pipelines.repositories import DailySummaryRepository, WeeklyMetricsRepository
from morpheus_pipelines.resources.warehouse import WarehouseResource

_daily = DailySummaryRepository()
_weekly = WeeklyMetricsRepository()


@dg.asset(
    metadata=tables_written("apac_weekly_metrics"),
    partitions_def=weekly_partitions,
    deps=[daily_summary],
    group_name=GROUP,
    kinds={"html"},
    backfill_policy=dg.BackfillPolicy.single_run(),
)
def weekly_metrics(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """The week's trends from the seven Daily Summaries (`apac_weekly_metrics`, Monday-start
    CST weeks).

    Per day: Active tenants per priority, HubSpot match-method mix, new and changed P0/P1,
    tenants entering the Active list (new or from Sales-owned) and the snapshot status; per
    week (rows on the Monday, metrics prefixed `week_`): events summed, tenant counts as of
    the last day with data, and `days_with_data`. Days without a Daily Summary are reported
    as missing, never as zero. Writes `metrics.html` (charts embedded), `metrics.csv`,
    `metrics.md`, `priorities.png` and `match_methods.png` under
    `$MORPHEUS_HOME/reports/weekly/<week>/`.
    """
    per_week = {}
    written = 0
    for week_key in context.partition_keys:
        days = [day.isoformat() for day in week_days(week_key)]
        with warehouse.session() as session:
            daily = _daily.metrics_for_partitions(session, days)
        weekly = build_weekly_metrics(week_key, daily)
        with warehouse.session() as session:
            written += _weekly.replace_week(
                session, weekly.rows(), week_key=week_key, run_id=context.run.run_id
            )
        files = write_weekly_report(weekly, warehouse.home)
        per_week[week_key] = weekly.counts()
        if weekly.missing_days:
            context.log.warning(
                f"{week_key}: no Daily Summary for "
                + ", ".join(d.isoformat() for d in weekly.missing_days)
            )
    return dg.MaterializeResult(
        metadata={
            "metrics": dg.MetadataValue.md(render_weekly_markdown(weekly, files=files)),
            **as_metadata(
                {
                    "dagster/row_count": len(weekly.rows()),
                    **weekly.counts(),
                    "rows_written": written,
                    "weeks": per_week if len(per_week) > 1 else None,
                }
            ),
            **file_paths(files),
        }
    )
