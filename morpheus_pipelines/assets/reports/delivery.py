"""``daily_summary_delivery`` and ``weekly_metrics_delivery``: each report of a partition to
its readers, once (docs/reports.md, "Delivery").

Assets of their own, not a step inside the reports: a failed delivery is retried without
rebuilding the report, it is visible in the UI per partition, and its check goes red. They
run when their report is materialised for the newest partition (an automation condition and
a sensor that is on by default); a backfill of older days delivers nothing unless it selects
them, so a manager is not mailed a month of summaries by a backfill.
"""

from typing import TYPE_CHECKING, Any

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.reports.daily import GROUP, daily_summary
from morpheus_pipelines.assets.reports.weekly import weekly_metrics
from morpheus_pipelines.platform.partitions import daily_partitions, weekly_partitions
from morpheus_pipelines.resources.report_delivery import ReportDeliveryResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

if TYPE_CHECKING:
    from morpheus_pipelines.tenants.steps.report_delivery import DeliveryReport

CHECK = "every_delivery_arrived"
CHECK_DESCRIPTION = (
    "Every reader of the partition's report got it: no delivery failed or ended unknown. "
    "A retryable failure is tried again by the next materialisation."
)


def _deliver(
    context: dg.AssetExecutionContext,
    report: str,
    warehouse: WarehouseResource,
    report_delivery: ReportDeliveryResource,
) -> dg.MaterializeResult:
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.report_delivery import deliver_report

    with report_delivery.get_senders() as senders:
        result = deliver_report(
            warehouse.session,
            warehouse.outputs(),
            senders,
            report=report,
            partition_key=context.partition_key,
            run_id=context.run.run_id,
        )
    for channel, setting in result.not_configured.items():
        context.log.info(f"{channel}: not configured ({setting} is empty)")
    for problem in result.problems:
        context.log.warning(
            f"{problem['channel']} to {problem['recipient']}: {problem['status']} "
            f"{problem['error']}"
        )
    return dg.MaterializeResult(
        metadata={
            "report": dg.MetadataValue.url(result.link),
            **as_metadata(
                {
                    "dagster/row_count": sum(result.by_status.values()),
                    "attempted": result.attempted,
                    "outcomes": result.outcomes,
                    "by_status": result.by_status,
                    "abandoned_as_unknown": result.abandoned,
                    "not_configured": result.not_configured,
                }
            ),
        },
        check_results=[_check_result(result)],
    )


def _check_result(result: "DeliveryReport") -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=CHECK,
        passed=not result.problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata=as_metadata(
            {
                "failed": sum(1 for p in result.problems if p["status"].startswith("failed")),
                "unknown": sum(1 for p in result.problems if p["status"] == "unknown"),
                "problems": result.problems or None,
            }
        ),
    )


def _delivery_asset(
    name: str, report: dg.AssetsDefinition, partitions_def: dg.PartitionsDefinition
) -> dict[str, Any]:
    """The decorator arguments both deliveries share: one partition of ``report`` each."""
    return {
        "name": name,
        "metadata": tables_written("report_deliveries"),
        "partitions_def": partitions_def,
        "deps": [report],
        "group_name": GROUP,
        "kinds": {"email", "slack"},
        "automation_condition": dg.AutomationCondition.eager(),
        "check_specs": [dg.AssetCheckSpec(CHECK, asset=name, description=CHECK_DESCRIPTION)],
    }


@dg.asset(**_delivery_asset("daily_summary_delivery", daily_summary, daily_partitions))
def daily_summary_delivery(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    report_delivery: ReportDeliveryResource,
) -> dg.MaterializeResult:
    """The partition's Daily Summary to each manager of `MORPHEUS_REPORT_RECIPIENTS` by
    email (its HTML as the body) and, with `MORPHEUS_SLACK_WEBHOOK_URL`, a Slack message
    linking it. Each delivery is a row of `report_deliveries`, claimed before it is sent, so
    re-running sends only what has not arrived."""
    return _deliver(context, "daily_summary", warehouse, report_delivery)


@dg.asset(**_delivery_asset("weekly_metrics_delivery", weekly_metrics, weekly_partitions))
def weekly_metrics_delivery(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    report_delivery: ReportDeliveryResource,
) -> dg.MaterializeResult:
    """The week's Weekly Metrics to each manager by email, its charts inline, and to Slack
    when configured; once per reader, like `daily_summary_delivery`."""
    return _deliver(context, "weekly_metrics", warehouse, report_delivery)


report_delivery_sensor = dg.AutomationConditionSensorDefinition(
    "report_delivery_sensor",
    target=dg.AssetSelection.assets(daily_summary_delivery, weekly_metrics_delivery),
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Delivers a report when its newest partition is materialised.",
)
