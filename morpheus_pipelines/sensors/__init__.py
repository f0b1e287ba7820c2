"""Sensors: run failures and snapshot health."""

import dagster as dg

from morpheus_pipelines.sensors.alerts import hubspot_snapshot_health, run_failure_alert

defs = dg.Definitions(sensors=[run_failure_alert, hubspot_snapshot_health])
