"""What the sensors of queues share (the HubSpot outbox, outbound messages, Lead Ads answers):
a drain takes every due row, so one queued or running at a time is enough, and each run is
keyed by when it was asked for."""

from datetime import UTC, datetime

import dagster as dg

ACTIVE = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def one_drain_at_a_time(
    context: dg.SensorEvaluationContext, job: str, prefix: str, **tags: str
) -> dg.SensorResult | dg.SkipReason:
    """A run of ``job`` unless one is queued or running already."""
    running = context.instance.get_runs(
        filters=dg.RunsFilter(job_name=job, statuses=ACTIVE), limit=1
    )
    if running:
        return dg.SkipReason(f"a drain is queued or running ({running[0].run_id})")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"{prefix}-{stamp}", tags=tags)])
