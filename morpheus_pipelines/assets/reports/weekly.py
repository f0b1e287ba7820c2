"""``weekly_metrics``: the week's trends from its seven Daily Summaries (docs/reports.md)."""

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.reports.daily import GROUP, daily_summary, file_links
from morpheus_pipelines.platform.partitions import weekly_partitions
from morpheus_pipelines.resources.warehouse import WarehouseResource


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
    `$MORPHEUS_REPORTS_URL/weekly/<week>/`, linked from the metadata.
    """
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.reports.markdown import render_weekly_markdown
    from morpheus_pipelines.tenants.steps.report_publishing import publish_weekly_metrics

    outputs = warehouse.outputs()
    weeks = [
        publish_weekly_metrics(
            warehouse.session,
            week_key=week_key,
            run_id=context.run.run_id,
            home=outputs.staging_home,
        )
        for week_key in context.partition_keys
    ]
    published = {week.week_key: outputs.publish_all(week.files) for week in weeks}
    for week in weeks:
        if week.metrics.missing_days:
            context.log.warning(
                f"{week.week_key}: no Daily Summary for "
                + ", ".join(d.isoformat() for d in week.metrics.missing_days)
            )
    last = weeks[-1]
    files = published[last.week_key]
    return dg.MaterializeResult(
        metadata={
            "metrics": dg.MetadataValue.md(
                render_weekly_markdown(last.metrics, files={n: f.link for n, f in files.items()})
            ),
            **as_metadata(
                {
                    "dagster/row_count": len(last.metrics.rows()),
                    **last.metrics.counts(),
                    "rows_written": sum(w.rows_written for w in weeks),
                    "weeks": {w.week_key: w.metrics.counts() for w in weeks}
                    if len(weeks) > 1
                    else None,
                }
            ),
            **file_links(files),
        }
    )
