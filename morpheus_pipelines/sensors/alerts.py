"""Sensors that tell people when something needs them: failed runs and snapshot health."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.assets.hubspot import DEFAULT_MAX_AGE_HOURS
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.services.hubspot_snapshot import read_snapshot_state


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


def snapshot_problem(
    status: str, age_seconds: float | None, last_attempt_status: str | None, max_age_hours: float
) -> str | None:
    """Why the snapshot needs attention, or None when it is healthy."""
    if last_attempt_status == "failed":
        return f"the last HubSpot sync attempt failed (snapshot {status})"
    if status == "unavailable":
        return "no successful HubSpot snapshot exists" if last_attempt_status else None
    if age_seconds is not None and age_seconds > max_age_hours * 3600:
        return f"the HubSpot snapshot is {age_seconds / 3600:.1f} h old"
    return None


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
    with warehouse.session() as session:
        state = read_snapshot_state(session, target_list.list_id, now=datetime.now(UTC))
    problem = snapshot_problem(
        state.status, state.age_seconds, state.last_attempt_status, DEFAULT_MAX_AGE_HOURS
    )
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
