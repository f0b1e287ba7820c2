"""``produced_by_deadline``: was yesterday's Daily Summary produced by 08:30 Asia/Shanghai?
A check on ``daily_summary``, evaluated once a day at the deadline by a check-only run
(docs/observability.md, "Freshness")."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import dagster as dg
from pydantic import Field

from morpheus_pipelines.assets.metadata import as_metadata
from morpheus_pipelines.assets.policies import DAILY_DEADLINE, DAILY_DEADLINE_CRON
from morpheus_pipelines.assets.reports.daily import daily_summary
from morpheus_pipelines.platform.partitions import TIMEZONE

DEADLINE_CHECK = "produced_by_deadline"
DEADLINE_CHECK_KEY = dg.AssetCheckKey(daily_summary.key, DEADLINE_CHECK)


class DeadlineCheckConfig(dg.Config):
    """Run configuration of `produced_by_deadline`."""

    as_of: str | None = Field(
        default=None,
        description="Judge the deadline last passed at this ISO-8601 time instead of now "
        "(Asia/Shanghai when it has no offset): `2026-11-30T09:00` judges the Daily Summary "
        "of 2026-11-29 against 2026-11-30 08:30.",
    )


def due_partition(now: datetime) -> tuple[str, datetime]:
    """The last deadline (08:30 Asia/Shanghai) at or before ``now``, and the daily partition
    due by it: the CST day before the deadline's."""
    local = now.astimezone(ZoneInfo(TIMEZONE))
    deadline = datetime.combine(local.date(), DAILY_DEADLINE, tzinfo=ZoneInfo(TIMEZONE))
    if deadline > local:
        deadline -= timedelta(days=1)
    return (deadline.date() - timedelta(days=1)).isoformat(), deadline


def _moment(as_of: str | None) -> datetime:
    if as_of is None:
        return datetime.now(UTC)
    moment = datetime.fromisoformat(as_of)
    return moment if moment.tzinfo else moment.replace(tzinfo=ZoneInfo(TIMEZONE))


def _produced_at(
    instance: dg.DagsterInstance, partition: str, *, before: datetime | None = None
) -> datetime | None:
    """When the newest materialisation of the partition (before ``before``, if given) was
    stored, or ``None``."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(
            asset_key=daily_summary.key,
            asset_partitions=[partition],
            before_timestamp=before.timestamp() if before else None,
        ),
        limit=1,
    ).records
    return datetime.fromtimestamp(records[0].timestamp, UTC) if records else None


@dg.asset_check(
    asset=daily_summary,
    name=DEADLINE_CHECK,
    blocking=False,
    description="Yesterday's Daily Summary (the CST day before) was materialised by "
    f"{DAILY_DEADLINE:%H:%M} Asia/Shanghai, when Sales read it. Evaluated at the deadline; "
    "a summary produced late still fails that day's evaluation.",
)
def produced_by_deadline(
    context: dg.AssetCheckExecutionContext, config: DeadlineCheckConfig
) -> dg.AssetCheckResult:
    partition, deadline = due_partition(_moment(config.as_of))
    on_time = _produced_at(context.instance, partition, before=deadline)
    late = None if on_time else _produced_at(context.instance, partition)
    if on_time:
        summary = f"the Daily Summary of {partition} was produced by {deadline:%Y-%m-%d %H:%M}"
    elif late:
        minutes = round((late - deadline).total_seconds() / 60)
        summary = f"the Daily Summary of {partition} was produced {minutes} min late"
    else:
        summary = f"no Daily Summary of {partition} by {deadline:%Y-%m-%d %H:%M}"
    return dg.AssetCheckResult(
        passed=on_time is not None,
        severity=dg.AssetCheckSeverity.ERROR,
        description=summary,
        metadata=as_metadata(
            {
                "partition": partition,
                "deadline": deadline,
                "produced_at": on_time or late,
                "late_by_minutes": round((late - deadline).total_seconds() / 60) if late else None,
            }
        ),
    )


daily_summary_deadline_job = dg.define_asset_job(
    name="daily_summary_deadline_job",
    selection=dg.AssetSelection.checks(produced_by_deadline),
    description="Evaluates the produced_by_deadline check of daily_summary (reads the event "
    "log only; materialises nothing).",
)

# One check-only run a day, at the deadline; read-only, so it starts RUNNING.
daily_summary_deadline_schedule = dg.ScheduleDefinition(
    name="daily_summary_deadline_schedule",
    job=daily_summary_deadline_job,
    cron_schedule=DAILY_DEADLINE_CRON,
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description=f"{DAILY_DEADLINE:%H:%M} Asia/Shanghai: was yesterday's Daily Summary "
    "produced in time?",
)
