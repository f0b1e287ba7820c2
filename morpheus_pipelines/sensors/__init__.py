"""Sensors: run failures, abandoned run retries and snapshot health, new leads and segment
members waiting, the lead automations, pending HubSpot deal events, the HubSpot outbox, leads
whose first touch is due, Lead Ads leads whose answers are due and queued messages to send."""

import dagster as dg

from morpheus_pipelines.sensors.alerts import hubspot_snapshot_health, run_failure_alert
from morpheus_pipelines.sensors.contact_retrieval import lead_contact_retrieval_sensor
from morpheus_pipelines.sensors.deal_events import pending_deal_events
from morpheus_pipelines.sensors.first_touch import first_touch_due_leads
from morpheus_pipelines.sensors.hubspot_outbox import hubspot_outbox_sensor
from morpheus_pipelines.sensors.lead_automations import lead_automations
from morpheus_pipelines.sensors.leads import new_leads
from morpheus_pipelines.sensors.outbound_messages import outbound_messages_sensor
from morpheus_pipelines.sensors.reengagement import new_segment_members
from morpheus_pipelines.sensors.run_retries import abandoned_run_retries
from morpheus_pipelines.sensors.waiting_leads import waiting_lead_owners_sensor

defs = dg.Definitions(
    sensors=[
        run_failure_alert,
        abandoned_run_retries,
        hubspot_snapshot_health,
        new_leads,
        lead_automations,
        new_segment_members,
        pending_deal_events,
        hubspot_outbox_sensor,
        first_touch_due_leads,
        waiting_lead_owners_sensor,
        lead_contact_retrieval_sensor,
        outbound_messages_sensor,
    ]
)
