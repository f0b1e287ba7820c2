"""Runs whose retry the daemon gave up on: the daily and weekly jobs run again.

Run retries (``dagster.yaml`` → ``run_retries``) start a new run for a run whose worker was
lost. The daemon makes that retry from its own copy of the code location; when the copy cannot
reach the code server at that moment, Dagster's ``consume_new_runs_for_automatic_reexecution``
reports "Failed to retry run", tags the run ``dagster/will_retry=false`` and never tries again.
That is exactly when a code-server restart lost the run: the daemon's copy is still
reconnecting to the restarted server. The lost partition would then wait for an operator.

This sensor finds those runs (the retry failed because the code location could not be
reached, not for another reason) and asks for a new run of the same job, partitions, assets,
checks and run config, keyed by the failed run, so each is run again at most once. A
partition's run is idempotent (docs/partitions.md, "Re-running a failed partition"), so a
whole new run gives what a retry from the failure gives. The new run starts a run group of
its own: run retries retry it when it is lost too, and a retry the daemon abandons for it is
left to the operator and ``run_failure_alert``. A run someone re-executed already, or whose
backfill was cancelled or deleted, is left alone. The sensor-driven jobs need no such help:
their sensors ask again for whatever is still due; an asset backfill's runs (``__ASSET_JOB``,
from Assets → Materialize) are not these jobs' and are not covered.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import dagster as dg
from dagster._core.execution.backfill import BulkActionStatus
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    AUTO_RETRY_RUN_ID_TAG,
    BACKFILL_ID_TAG,
    PARENT_RUN_ID_TAG,
    PARTITION_NAME_TAG,
    USER_EDITABLE_SYSTEM_TAGS,
    WILL_RETRY_TAG,
)
from dagster._utils.error import SerializableErrorInfo

from morpheus_pipelines.assets.reports.schedules import apac_weekly_job
from morpheus_pipelines.assets.tenants.schedules import apac_daily_job

DAEMON_GAVE_UP = "Failed to retry run"
# The errors of a code location the daemon could not reach (anything else, such as a retry
# with no step left to run, was the daemon's own judgement).
UNREACHABLE = frozenset({"DagsterCodeLocationLoadError", "DagsterUserCodeUnreachableError"})
RETRY_OF_TAG = "morpheus/retry_of"
# A single-run backfill's run names its days by a range instead of a partition.
PARTITION_RANGE_TAGS = (ASSET_PARTITION_RANGE_START_TAG, ASSET_PARTITION_RANGE_END_TAG)
# A backfill someone cancelled: its lost runs stay lost. One that has finished is not, since a
# job backfill finishes as soon as none of its runs is running, lost ones included.
CANCELLED = frozenset({BulkActionStatus.CANCELING, BulkActionStatus.CANCELED})
# Failures older than this are an operator's to judge, not a retry's.
LOOK_BACK = timedelta(hours=24)
JOBS = (apac_daily_job, apac_weekly_job)


def may_need_retry(tags: Mapping[str, str]) -> bool:
    """Whether a failed run's tags allow that the daemon meant to retry it and did not: it
    will not be retried, no retry was made, and it is not itself this sensor's retry."""
    return (
        tags.get(WILL_RETRY_TAG) == "false"
        and AUTO_RETRY_RUN_ID_TAG not in tags
        and RETRY_OF_TAG not in tags
    )


def carried_tags(tags: Mapping[str, str], failed_run_id: str) -> dict[str, str]:
    """The failed run's own tags, the system tags a user may set (priority, retries, run
    time) and its partition range; Dagster sets the rest for the new run. And which run it
    retries."""
    kept = {
        k: v
        for k, v in tags.items()
        if not k.startswith(("dagster/", ".dagster/"))
        or k in USER_EDITABLE_SYSTEM_TAGS
        or (k in PARTITION_RANGE_TAGS and PARTITION_NAME_TAG not in tags)
    }
    return {**kept, RETRY_OF_TAG: failed_run_id}


def unreachable_location(error: SerializableErrorInfo | None) -> bool:
    """Whether ``error``, or an error it came from, says the code location was unreachable."""
    while error is not None:
        if error.cls_name in UNREACHABLE:
            return True
        error = error.cause or error.context
    return False


def _abandoned_for_the_location(instance: dg.DagsterInstance, run_id: str) -> bool:
    """The daemon's last word on the run is that it could not retry it, for want of the
    code location."""
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.ENGINE_EVENT, limit=20, ascending=False
    ).records
    for record in records:
        entry = record.event_log_entry
        if entry.message == DAEMON_GAVE_UP:
            data = entry.dagster_event.engine_event_data if entry.dagster_event else None
            return unreachable_location(data.error if data else None)
    return False


def _handled_already(instance: dg.DagsterInstance, run: dg.DagsterRun) -> bool:
    """A retry of ours exists, someone re-executed the run, or its backfill was cancelled
    or deleted."""
    for tag in (RETRY_OF_TAG, PARENT_RUN_ID_TAG):
        if instance.get_runs(dg.RunsFilter(tags={tag: run.run_id}), limit=1):
            return True
    backfill_id = run.tags.get(BACKFILL_ID_TAG)
    if backfill_id is None:
        return False
    backfill = instance.get_backfill(backfill_id)
    return backfill is None or backfill.status in CANCELLED


def retry_request(run: dg.DagsterRun) -> dg.RunRequest:
    """A new run of what ``run`` was asked to do, keyed by it."""
    return dg.RunRequest(
        run_key=f"retry-of-{run.run_id}",
        job_name=run.job_name,
        run_config=run.run_config,
        partition_key=run.tags.get(PARTITION_NAME_TAG),
        asset_selection=None if run.asset_selection is None else list(run.asset_selection),
        asset_check_keys=None
        if run.asset_check_selection is None
        else list(run.asset_check_selection),
        tags=carried_tags(run.tags, run.run_id),
    )


@dg.sensor(
    name="abandoned_run_retries",
    jobs=list(JOBS),
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def abandoned_run_retries(context: dg.SensorEvaluationContext) -> dg.SensorResult:
    """A new run for each recent failed run of the daily or weekly job whose retry the daemon
    abandoned because it could not reach the code location; keyed by the failed run, so
    never twice."""
    instance = context.instance
    requests = []
    for job in JOBS:
        failed = instance.get_runs(
            filters=dg.RunsFilter(
                job_name=job.name,
                statuses=[dg.DagsterRunStatus.FAILURE],
                tags={WILL_RETRY_TAG: "false"},
                updated_after=datetime.now(UTC) - LOOK_BACK,
            ),
            limit=100,
        )
        for run in failed:
            if not may_need_retry(run.tags) or not _abandoned_for_the_location(
                instance, run.run_id
            ):
                continue
            if _handled_already(instance, run):
                continue
            context.log.warning(
                f"run {run.run_id} of {job.name} was lost and the daemon abandoned its retry: "
                "running it again"
            )
            requests.append(retry_request(run))
    return dg.SensorResult(
        run_requests=requests,
        skip_reason=None if requests else "no run's retry was abandoned",
    )
