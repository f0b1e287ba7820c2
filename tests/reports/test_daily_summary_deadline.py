"""``produced_by_deadline``: was yesterday's Daily Summary produced by 08:30 Asia/Shanghai?
Evaluated through its check-only job on the project's instance; the moment it judges is
passed in (``as_of``), so each outcome is decided by the event log, not by the clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import dagster as dg
import pytest

from morpheus_pipelines.assets.reports.deadline import DEADLINE_CHECK_KEY, due_partition
from morpheus_pipelines.definitions import defs
from tests.support.instance import project_instance

CST = ZoneInfo("Asia/Shanghai")
JOB = "daily_summary_deadline_job"


@pytest.mark.parametrize(
    ("now", "partition", "deadline"),
    [
        # At or after 08:30 the summary of the day before is due by today's 08:30...
        (datetime(2026, 11, 30, 8, 30, tzinfo=CST), "2026-11-29", datetime(2026, 11, 30, 8, 30)),
        (datetime(2026, 11, 30, 23, 59, tzinfo=CST), "2026-11-29", datetime(2026, 11, 30, 8, 30)),
        # ...before it, the last deadline passed was yesterday's, for the day before that.
        (datetime(2026, 11, 30, 8, 29, tzinfo=CST), "2026-11-28", datetime(2026, 11, 29, 8, 30)),
        # 00:45 UTC is 08:45 CST: the CST day decides, not the UTC one.
        (datetime(2026, 11, 30, 0, 45, tzinfo=UTC), "2026-11-29", datetime(2026, 11, 30, 8, 30)),
    ],
)
def test_the_partition_due_is_the_cst_day_before_the_last_deadline(
    now: datetime, partition: str, deadline: datetime
) -> None:
    assert due_partition(now) == (partition, deadline.replace(tzinfo=CST))


def test_the_daily_job_does_not_judge_the_deadline_and_a_schedule_does_at_0830() -> None:
    daily = defs.resolve_job_def("apac_daily_job").asset_layer.asset_graph.asset_check_keys
    assert DEADLINE_CHECK_KEY not in daily
    schedule = defs.resolve_schedule_def("daily_summary_deadline_schedule")
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("30 8 * * *", "Asia/Shanghai")
    assert schedule.job_name == JOB
    job = defs.resolve_job_def(JOB)
    assert job.asset_layer.executable_asset_keys == set()  # it materialises nothing
    assert job.asset_layer.asset_graph.asset_check_keys == {DEADLINE_CHECK_KEY}


@pytest.fixture
def location(
    database_url: str, instance_database: str, tmp_path: Path
) -> Iterator[tuple[dg.DagsterInstance, dg.Definitions]]:
    with project_instance(database_url, instance_database, tmp_path) as loaded:
        yield loaded


def _produce(instance: dg.DagsterInstance, partition: str) -> datetime:
    """Record a materialisation of the Daily Summary of ``partition``, as a run does; when."""
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key="daily_summary", partition=partition)
    )
    [record] = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("daily_summary"), asset_partitions=[partition]),
        limit=1,
    ).records
    return datetime.fromtimestamp(record.timestamp, UTC)


def _evaluate(
    location: tuple[dg.DagsterInstance, dg.Definitions], as_of: datetime
) -> dg.AssetCheckEvaluation:
    instance, definitions = location
    result = definitions.resolve_job_def(JOB).execute_in_process(
        instance=instance,
        run_config={
            "ops": {"daily_summary_produced_by_deadline": {"config": {"as_of": as_of.isoformat()}}}
        },
    )
    assert result.success  # a failed check is a result, not a failed run
    assert result.get_asset_materialization_events() == []
    [evaluation] = result.get_asset_check_evaluations()
    assert evaluation.asset_check_key == DEADLINE_CHECK_KEY
    return evaluation


def test_a_summary_produced_before_the_deadline_passes(
    location: tuple[dg.DagsterInstance, dg.Definitions],
) -> None:
    # Judged as of a day from now, the deadline is the next 08:30 CST: still ahead of now.
    as_of = datetime.now(UTC) + timedelta(days=1)
    partition, deadline = due_partition(as_of)
    produced_at = _produce(location[0], partition)
    assert produced_at < deadline

    evaluation = _evaluate(location, as_of)
    assert evaluation.passed is True
    assert evaluation.metadata["partition"].value == partition
    assert evaluation.metadata["produced_at"].value == pytest.approx(produced_at.timestamp())
    assert evaluation.metadata["deadline"].value == deadline.timestamp()
    assert "late_by_minutes" not in evaluation.metadata


def test_no_summary_of_the_day_due_fails(
    location: tuple[dg.DagsterInstance, dg.Definitions],
) -> None:
    as_of = datetime.now(UTC) + timedelta(days=1)
    partition, _ = due_partition(as_of)
    # The day before's summary exists; it is not the one due.
    earlier = (datetime.fromisoformat(partition) - timedelta(days=1)).date().isoformat()
    _produce(location[0], earlier)

    evaluation = _evaluate(location, as_of)
    assert evaluation.passed is False
    assert evaluation.severity == dg.AssetCheckSeverity.ERROR
    assert evaluation.description.startswith(f"no Daily Summary of {partition} by ")
    assert "produced_at" not in evaluation.metadata


def test_a_summary_produced_after_the_deadline_fails_and_says_how_late(
    location: tuple[dg.DagsterInstance, dg.Definitions],
) -> None:
    # Judged as of now, the deadline is the last 08:30 CST: already behind now.
    as_of = datetime.now(UTC)
    partition, deadline = due_partition(as_of)
    produced_at = _produce(location[0], partition)
    assert produced_at > deadline

    evaluation = _evaluate(location, as_of)
    assert evaluation.passed is False
    late = round((produced_at - deadline).total_seconds() / 60)
    assert evaluation.metadata["late_by_minutes"].value == late
    assert (
        evaluation.description == f"the Daily Summary of {partition} was produced {late} min late"
    )
