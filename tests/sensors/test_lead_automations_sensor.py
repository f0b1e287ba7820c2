"""The ``lead_automations`` sensor: it fires what is due, reports it on the
``automation_firings`` asset with each rule's description, and a second tick fires nothing;
and it waits for the HubSpot engagement sync, which starts stopped while the sensor starts
running, so that a lead a rep called in HubSpot is never nudged for want of the call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg
from sqlalchemy import func, select

from morpheus_pipelines.crm.models import AutomationFiring
from morpheus_pipelines.crm.rules.timeline import ENGAGEMENT_SYNC_MAX_AGE, engagement_sync_missing
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.definitions import defs
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.lead_automations import last_engagement_sync, lead_automations
from tests.support.timeline import lead_with_history, rule, subscription

ENGAGEMENTS = dg.AssetKey("hubspot_engagements")


def _synced_instance() -> dg.DagsterInstance:
    """A Dagster instance on which the engagement sync has just materialised."""
    instance = dg.DagsterInstance.ephemeral()
    instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=ENGAGEMENTS))
    return instance


def _firings(url: str) -> int:
    with get_session(url) as session:
        return session.scalar(select(func.count()).select_from(AutomationFiring))


def _due_nudge(url: str) -> None:
    subscription_id = subscription(url)
    rule(url, subscription_id, "quiet_day", "email", quiet_hours=24)
    lead_with_history(url, subscription_id, datetime.now(UTC) - timedelta(days=2))


def test_the_sensor_fires_due_nudges_once_and_describes_the_rules(database_url: str) -> None:
    resources = {"warehouse": WarehouseResource(database_url=database_url)}
    instance = _synced_instance()
    first_tick = lead_automations(dg.build_sensor_context(resources=resources, instance=instance))
    assert isinstance(first_tick, dg.SkipReason)
    assert "no active automation rule" in first_tick.skip_message

    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "window_closing", "whatsapp", 12, window_lead_hours=2)
    rule(database_url, subscription_id, "quiet_day", "email", quiet_hours=24)
    lead_with_history(database_url, subscription_id, datetime.now(UTC) - timedelta(days=2))

    fired = lead_automations(dg.build_sensor_context(resources=resources, instance=instance))
    again = lead_automations(dg.build_sensor_context(resources=resources, instance=instance))

    assert isinstance(fired, dg.SensorResult)
    (observation,) = fired.asset_events
    assert observation.asset_key == dg.AssetKey("automation_firings")
    assert observation.metadata["firings_by_rule"].value == {"quiet_day": 1}
    descriptions = observation.metadata["rules"].value
    assert "never outside the window" in descriptions["window_closing"]
    assert isinstance(again, dg.SkipReason)


def test_the_deployed_sensor_waits_for_the_engagement_sync_it_starts_ahead_of(
    database_url: str,
) -> None:
    """The sensor starts RUNNING and the engagement sync's schedule STOPPED: a deployment as
    it comes has automations and no reps' calls. Evaluated as deployed, on an instance where
    the schedule's job never ran, the sensor skips, says why, and fires nothing; without the
    wait it would nudge the lead below, whom a rep may have called."""
    repository = defs.get_repository_def()
    sensor = repository.get_sensor_def("lead_automations")
    schedule = repository.get_schedule_def("hubspot_engagement_job_schedule")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert schedule.default_status == dg.DefaultScheduleStatus.STOPPED
    # the asset the sensor waits for is the one the schedule's job materialises
    job = repository.get_job(schedule.job_name)
    assert set(job.asset_layer.executable_asset_keys) == {ENGAGEMENTS}

    _due_nudge(database_url)
    resources = {"warehouse": WarehouseResource(database_url=database_url)}
    never_synced = dg.DagsterInstance.ephemeral()
    tick = sensor(dg.build_sensor_context(resources=resources, instance=never_synced))
    assert isinstance(tick, dg.SkipReason)
    assert tick.skip_message == (
        "the HubSpot engagement sync has never run, so no rep's HubSpot call is on the timeline "
        "and every lead would look quiet: materialise hubspot_engagements (turn on "
        "hubspot_engagement_job_schedule)"
    )
    assert _firings(database_url) == 0

    # once the sync has run, the same lead is nudged
    tick = sensor(dg.build_sensor_context(resources=resources, instance=_synced_instance()))
    assert isinstance(tick, dg.SensorResult)
    assert _firings(database_url) == 1


def test_the_last_sync_is_read_from_the_instance_and_judged_by_its_age() -> None:
    assert last_engagement_sync(dg.DagsterInstance.ephemeral()) is None
    before = datetime.now(UTC)
    synced_at = last_engagement_sync(_synced_instance())
    assert synced_at is not None and before - timedelta(seconds=1) <= synced_at
    assert synced_at <= datetime.now(UTC)
    # a sync that stopped an hour and a bit ago no longer vouches for the timeline
    assert engagement_sync_missing(synced_at, synced_at + ENGAGEMENT_SYNC_MAX_AGE) is None
    stale = engagement_sync_missing(synced_at, synced_at + timedelta(hours=1, minutes=30))
    assert stale == (
        "the HubSpot engagement sync last ran 1.5 h ago (more than 1 h), so a rep's recent "
        "HubSpot call may be missing from the timeline"
    )
