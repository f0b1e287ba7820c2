"""Sensors that tell people when something needs them: failed runs and snapshot health."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.tenants.rules.snapshot_health import problem as snapshot_problem


@dg.run_failure_sensor(
    name="run_failure_alert",
    default_status=dg.DefaultSensorStatus.RUNNING,
    monitor_all_code_locations=False,
)
def run_failure_alert(context: dg.RunFailureSensorContext, notifier: NotifierResource) -> None:
    """Alerts when any run of this code location fails, with the run id, job and partition
    so the partition can be re-executed from the UI."""
    run = context.dagster_run
    error = context.failure_event.message or ""
    notifier.notify(
        "run_failed",
        f"run {run.run_id[:8]} of {run.job_name} failed",
        run_id=run.run_id,
        job=run.job_name,
        partition=run.tags.get("dagster/partition"),
        error=error[:500],
    )


@dg.sensor(
    name="hubspot_snapshot_health",
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def hubspot_snapshot_health(
    context: dg.SensorEvaluationContext,
    warehouse: WarehouseResource,
    target_list: TargetListResource,
    notifier: NotifierResource,
) -> dg.SkipReason:
    """Alerts once per problem when the last HubSpot sync attempt failed or the last
    successful snapshot is older than 26 hours; stays quiet while the problem persists."""
    # The step brings pandas: imported at the first tick, not by the code location.
    from morpheus_pipelines.tenants.steps.hubspot_snapshot import read_snapshot_state

    with warehouse.session() as session:
        state = read_snapshot_state(session, target_list.list_id, now=datetime.now(UTC))
    problem = snapshot_problem(state.status, state.age_seconds, state.last_attempt_status)
    # The cursor remembers the problem already reported, so one failure sends one alert.
    if problem and problem != context.cursor:
        notifier.notify(
            "hubspot_snapshot_unhealthy",
            problem,
            snapshot_status=state.status,
            sync_id=state.sync_id,
            snapshot_age_seconds=state.age_seconds,
            last_error=state.last_error,
        )
        context.update_cursor(problem)
        return dg.SkipReason(f"alerted: {problem}")
    if not problem and context.cursor:
        context.update_cursor("")
    return dg.SkipReason(problem or "snapshot healthy")
