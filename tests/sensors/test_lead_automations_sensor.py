"""The ``lead_automations`` sensor: it fires what is due, reports it on the
``automation_firings`` asset with each rule's description, and a second tick fires nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg

from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.sensors.lead_automations import lead_automations
from tests.support.timeline import lead_with_history, rule, subscription


def test_the_sensor_fires_due_nudges_once_and_describes_the_rules(database_url: str) -> None:
    resources = {"warehouse": WarehouseResource(database_url=database_url)}
    first_tick = lead_automations(dg.build_sensor_context(resources=resources))
    assert isinstance(first_tick, dg.SkipReason)
    assert "no active automation rule" in first_tick.skip_message

    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "window_closing", "whatsapp", 12, window_lead_hours=2)
    rule(database_url, subscription_id, "quiet_day", "email", quiet_hours=24)
    lead_with_history(database_url, subscription_id, datetime.now(UTC) - timedelta(days=2))

    fired = lead_automations(dg.build_sensor_context(resources=resources))
    again = lead_automations(dg.build_sensor_context(resources=resources))

    assert isinstance(fired, dg.SensorResult)
    (observation,) = fired.asset_events
    assert observation.asset_key == dg.AssetKey("automation_firings")
    assert observation.metadata["firings_by_rule"].value == {"quiet_day": 1}
    descriptions = observation.metadata["rules"].value
    assert "never outside the window" in descriptions["window_closing"]
    assert isinstance(again, dg.SkipReason)
