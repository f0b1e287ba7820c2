"""Runs whose retry the daemon gave up on: the daily and weekly jobs run again.

Run retries (``dagster.yaml`` → ``run_retries``) start a new run for a run whose worker was
lost. The daemon makes that retry from its own copy of the code location; when the copy cannot
answer at that moment, it reports "Failed to retry run", tags the run
``dagster/will_retry=false`` and never tries again. That is exactly when a code-server restart
lost the run: the daemon's copy is still reconnecting to the restarted server. The lost
partition would then wait for an operator.

This sensor finds those runs and asks for a new run of the same job, partition and assets,
keyed by the failed run, so each is run again at most once. A partition run is idempotent
(docs/pipeline.md), so a whole new run gives what a retry from the failure gives. A run
that is itself such a retry is not retried again: a second loss is left to the operator and
to ``run_failure_alert``. The sensor-driven jobs need no such help: their sensors ask again
for whatever is still due.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import dagster as dg

from morpheus_pipelines.assets.reports.schedules import apac_weekly_job
from morpheus_pipelines.assets.tenants.schedules import apac_daily_job

# What the daemon reports on the run when its retry raised (dagster/_daemon/auto_run_reexecution).
DAEMON_GAVE_UP = "Failed to retry run"
RETRY_OF_TAG = "morpheus/retry_of"
WILL_RETRY_TAG = "dagster/will_retry"
AUTO_RETRY_RUN_ID_TAG = "dagster/auto_retry_run_id"
# Failures older than this are an operator's to judge, not a retry's.
LOOK_BACK = timedelta(hours=24)
JOBS = (apac_daily_job, apac_weekly_job)


def needs_retry(tags: Mapping[str, str], daemon_gave_up: bool) -> bool:
    """Whether a failed run is one whose retry the daemon meant to make and did not."""
    return (
        daemon_gave_up
        and tags.get(WILL_RETRY_TAG) == "false"
        and AUTO_RETRY_RUN_ID_TAG not in tags
        and RETRY_OF_TAG not in tags
    )


def carried_tags(tags: Mapping[str, str], failed_run_id: str) -> dict[str, str]:
    """The failed run's own tags (Dagster's system tags are the new run's to set), and which
    run it retries."""
    own = {k: v for k, v in tags.items() if not k.startswith(("dagster/", ".dagster/"))}
    return {**own, RETRY_OF_TAG: failed_run_id}


def _daemon_gave_up(instance: dg.DagsterInstance, run_id: str) -> bool:
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, limit=1000
    ).records
    return any(r.event_log_entry.message == DAEMON_GAVE_UP for r in records)


@dg.sensor(
    name="abandoned_run_retries",
    jobs=list(JOBS),
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def abandoned_run_retries(context: dg.SensorEvaluationContext) -> dg.SensorResult:
    """A new run for each recent failed run of the daily or weekly job whose retry the daemon
    abandoned; keyed by the failed run, so never twice."""
    failed = context.instance.get_runs(
        filters=dg.RunsFilter(
            statuses=[dg.DagsterRunStatus.FAILURE],
            tags={WILL_RETRY_TAG: "false"},
            updated_after=datetime.now(UTC) - LOOK_BACK,
        ),
        limit=100,
    )
    requests = []
    for run in failed:
        if run.job_name not in {job.name for job in JOBS}:
            continue
        if not needs_retry(run.tags, _daemon_gave_up(context.instance, run.run_id)):
            continue
        context.log.warning(
            f"run {run.run_id[:8]} of {run.job_name} was lost and its retry abandoned: "
            "running it again"
        )
        requests.append(
            dg.RunRequest(
                run_key=f"retry-of-{run.run_id}",
                job_name=run.job_name,
                partition_key=run.tags.get("dagster/partition"),
                asset_selection=None if run.asset_selection is None else list(run.asset_selection),
                tags=carried_tags(run.tags, run.run_id),
            )
        )
    return dg.SensorResult(
        run_requests=requests,
        skip_reason=None if requests else "no run's retry was abandoned",
    )
