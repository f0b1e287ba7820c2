"""Sensors and the notifier: alerts reach a real local webhook receiver over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.resources.hubspot import TargetListResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.alerts import hubspot_snapshot_health, run_failure_alert
from morpheus_pipelines.tenants.rules.snapshot_health import problem as snapshot_problem
from morpheus_pipelines.tenants.store import HubSpotTargetSyncStateRepository
from tests.support.webhook import Receiver

states = HubSpotTargetSyncStateRepository()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def test_notifier_posts_to_the_webhook_and_survives_a_dead_one(receiver: Receiver) -> None:
    assert NotifierResource(webhook_url=receiver.url).notify("x", "something broke", run_id="r")
    assert receiver.posts == [{"text": "[morpheus] something broke", "alert": "x", "run_id": "r"}]
    dead = NotifierResource(webhook_url="http://127.0.0.1:9/nothing", timeout_seconds=0.5)
    assert dead.notify("x", "again") is False  # logged, never raised


@pytest.mark.parametrize(
    ("status", "age_hours", "attempt", "expected"),
    [
        ("fresh", 1, "success", None),
        ("fresh", 30, "success", "old"),
        ("stale", 2, "failed", "failed"),
        ("unavailable", None, "failed", "failed"),
        ("unavailable", None, None, None),
    ],
)
def test_snapshot_problem(status, age_hours, attempt, expected) -> None:
    problem = snapshot_problem(status, None if age_hours is None else age_hours * 3600, attempt, 26)
    assert (problem is None) == (expected is None)
    if expected:
        assert expected in problem


def test_snapshot_health_sensor_alerts_once_per_problem(
    database_url: str, receiver: Receiver
) -> None:
    now = datetime.now(UTC)
    with get_session(database_url) as session:
        states.record_success(
            session, list_id="19544", sync_id="s1", synced_at=now, list_total=3, snapshot_hash="h"
        )
    resources = {
        "warehouse": WarehouseResource(database_url=database_url),
        "target_list": TargetListResource(),
        "notifier": NotifierResource(webhook_url=receiver.url),
    }
    with dg.build_sensor_context(resources=resources) as context:
        hubspot_snapshot_health(context)
        assert receiver.posts == []  # healthy: quiet
        with get_session(database_url) as session:
            states.record_failure(
                session,
                list_id="19544",
                attempted_at=now,
                error="HTTP 401 category=INVALID_AUTHENTICATION",
            )
        hubspot_snapshot_health(context)
        hubspot_snapshot_health(context)  # same problem: no second alert
        assert [p["alert"] for p in receiver.posts] == ["hubspot_snapshot_unhealthy"]
        assert receiver.posts[0]["snapshot_status"] == "stale"
        with get_session(database_url) as session:
            states.record_success(
                session,
                list_id="19544",
                sync_id="s2",
                synced_at=now - timedelta(hours=30),
                list_total=3,
                snapshot_hash="h",
            )
        hubspot_snapshot_health(context)  # a different problem: a new alert
        assert len(receiver.posts) == 2 and "h old" in receiver.posts[1]["text"]


def test_run_failure_sensor_posts_the_run_and_partition(receiver: Receiver) -> None:
    @dg.asset(partitions_def=dg.DailyPartitionsDefinition(start_date="2026-11-01"))
    def broken() -> None:
        raise RuntimeError("database went away")

    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [broken], partition_key="2026-11-29", instance=instance, raise_on_error=False
        )
        assert not result.success
        failure = instance.all_logs(result.run_id, of_type=dg.DagsterEventType.RUN_FAILURE)[
            0
        ].dagster_event
        context = dg.build_run_status_sensor_context(
            sensor_name="run_failure_alert",
            dagster_event=failure,
            dagster_instance=instance,
            dagster_run=instance.get_run_by_id(result.run_id),
            resources={"notifier": NotifierResource(webhook_url=receiver.url)},
        ).for_run_failure()
        run_failure_alert(context)
    assert len(receiver.posts) == 1
    post = receiver.posts[0]
    assert post["alert"] == "run_failed" and post["run_id"] == result.run_id
    assert post["partition"] == "2026-11-29"
