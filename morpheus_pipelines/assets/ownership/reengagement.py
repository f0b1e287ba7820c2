"""``reengagement_assignments``: the segments' ownership block, follow-up tasks, enrolments
and HubSpot write-back (docs/ownership.md)."""

from datetime import timedelta

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.crm.rules.ownership import WriteBackStatus
from morpheus_pipelines.crm.steps.reengagement.run import ReengagementRun, run_reengagement
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

ASSET_KEY = dg.AssetKey("reengagement_assignments")
BATCHES_CHECK = "every_batch_assigned"
WRITE_BACK_CHECK = "hubspot_write_back_complete"


@dg.asset(
    key=ASSET_KEY,
    deps=["sales_reps", "reengagement_segment_members", "hubspot_task_completions"],
    group_name="ownership",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    metadata=tables_written(
        "reengagement_assignments",
        "follow_up_tasks",
        "contacts",
        "activities",
        "configs",
        "sales_rep_fairness",
    ),
    check_specs=[
        dg.AssetCheckSpec(
            name=BATCHES_CHECK,
            asset=ASSET_KEY,
            description="No segment batch was aborted for want of an active rep (a campaign "
            "target batch is aborted whole rather than enrolled unassigned).",
            blocking=False,
        ),
        dg.AssetCheckSpec(
            name=WRITE_BACK_CHECK,
            asset=ASSET_KEY,
            description="Every assignment's hubspot_owner_id / call_assigned_to and list "
            "enrolment reached HubSpot (pending ones are completed by the next run).",
            blocking=False,
        ),
    ],
    tags={"domain": "ownership"},
)
def reengagement_assignments(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    ownership: OwnershipResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """For each segment (email click, supplier, no-show, lost deal, campaign target, dialer
    call ended): the new members get the ownership block, a follow-up task and a list
    enrolment; then `hubspot_owner_id` / `call_assigned_to` go to HubSpot in batches of
    ≤ 100. Write-backs left pending by an earlier run are completed first. Re-running assigns
    nobody twice. Metadata carries the outcomes and the fairness of the rotation."""
    with hubspot.get_client(context.log) as client:
        run = run_reengagement(
            client,
            warehouse.session,
            ownership.segment_settings(context.run.run_id),
            fairness_window=timedelta(days=ownership.fairness_window_days),
            run_id=context.run.run_id,
            log=context.log,
        )
    for segment in run.segments:
        context.log.info(f"{segment.segment.value}: {dict(segment.outcomes) or 'no new members'}")
    return dg.MaterializeResult(
        metadata=as_metadata(_metadata(run, ownership.fairness_window_days)),
        check_results=_checks(run),
    )


def _metadata(run: ReengagementRun, fairness_window_days: int) -> dict[str, object]:
    earlier, written, report = run.earlier, run.written, run.fairness
    return {
        "subscription_id": str(run.subscription_id),
        "outcomes_by_segment": {s.segment.value: dict(s.outcomes) for s in run.segments},
        "members_processed": sum(s.processed for s in run.segments),
        "aborted_segments": run.aborted or None,
        "segments_waiting_for_hubspot": run.owner_read_errors or None,
        "write_backs_completed_from_earlier_runs": earlier.written,
        "write_backs_written": written.written,
        "write_backs_rejected": earlier.rejected + written.rejected,
        "list_enrolments_added": earlier.enrolled + written.enrolled,
        "hubspot_calls": earlier.calls + written.calls,
        "write_back_status": run.write_back_status,
        "write_back_error": run.error,
        "fairness_window_days": fairness_window_days,
        "fairness_assignments_per_rep": {r.email: r.assignments for r in report.rows},
        "fairness_spread": report.spread,
        "fairness_perfect_spread": report.perfect_spread,
        "fairness_max_abs_deviation": report.max_abs_deviation,
        "reps_skipped_as_inactive": report.skipped_inactive,
        "dagster/row_count": sum(run.write_back_status.values()),
    }


def _checks(run: ReengagementRun) -> list[dg.AssetCheckResult]:
    return [
        dg.AssetCheckResult(
            check_name=BATCHES_CHECK,
            passed=not run.aborted,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata=as_metadata({"aborted": run.aborted or None}),
        ),
        dg.AssetCheckResult(
            check_name=WRITE_BACK_CHECK,
            passed=not run.pending and not run.owner_read_errors,
            severity=dg.AssetCheckSeverity.WARN,
            metadata=as_metadata(
                {
                    "pending": run.pending,
                    "rejected": run.write_back_status.get(WriteBackStatus.REJECTED, 0),
                    "error": run.error,
                    "owner_read_errors": run.owner_read_errors or None,
                }
            ),
        ),
    ]
