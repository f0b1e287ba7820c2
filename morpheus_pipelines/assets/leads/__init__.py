"""The lead slice: what happens after `morpheus serve` created a lead (docs/leads.md), and the
HubSpot deal events and reconciliation that close leads and keep contacts in step
(docs/hubspot-webhooks.md); the queued messages sent (docs/messages.md)."""

import dagster as dg

from morpheus_pipelines.assets.leads.attribution import (
    lead_attribution,
    lead_attribution_job,
    lead_attribution_schedule,
)
from morpheus_pipelines.assets.leads.automations import AUTOMATION_FIRINGS
from morpheus_pipelines.assets.leads.contact_retrieval import (
    lead_contact_retrieval,
    lead_contact_retrieval_job,
)
from morpheus_pipelines.assets.leads.deal_events import (
    deal_events_check_job,
    deal_events_check_schedule,
    deal_events_not_stuck,
    hubspot_deal_events,
    hubspot_deal_events_job,
)
from morpheus_pipelines.assets.leads.engagements import (
    hubspot_engagement_job,
    hubspot_engagement_schedule,
    hubspot_engagements,
)
from morpheus_pipelines.assets.leads.first_touch import first_touch_sla, first_touch_sla_job
from morpheus_pipelines.assets.leads.follow_up import lead_duplicates, lead_enrichment, lead_scores
from morpheus_pipelines.assets.leads.intake import ACTIVITIES, LEADS
from morpheus_pipelines.assets.leads.lead_load import (
    stale_lead_load,
    stale_lead_load_job,
    stale_lead_load_schedule,
)
from morpheus_pipelines.assets.leads.messages import (
    outbound_message_delivery,
    outbound_messages_job,
)
from morpheus_pipelines.assets.leads.reconciliation import (
    hubspot_reconciliation,
    hubspot_reconciliation_job,
    hubspot_reconciliation_schedule,
)
from morpheus_pipelines.assets.leads.waiting import (
    no_lead_waits_for_an_owner,
    waiting_lead_owners,
    waiting_lead_owners_job,
)

lead_follow_up_job = dg.define_asset_job(
    name="lead_follow_up_job",
    selection=dg.AssetSelection.assets(lead_enrichment, lead_scores, lead_duplicates),
    description="Enrich, score and check for duplicates the leads intake created.",
)

defs = dg.Definitions(
    assets=[
        LEADS,
        ACTIVITIES,
        lead_enrichment,
        lead_scores,
        lead_duplicates,
        lead_attribution,
        hubspot_engagements,
        AUTOMATION_FIRINGS,
        hubspot_deal_events,
        hubspot_reconciliation,
        first_touch_sla,
        stale_lead_load,
        waiting_lead_owners,
        lead_contact_retrieval,
        outbound_message_delivery,
    ],
    asset_checks=[deal_events_not_stuck, no_lead_waits_for_an_owner],
    jobs=[
        lead_follow_up_job,
        lead_attribution_job,
        hubspot_engagement_job,
        hubspot_deal_events_job,
        deal_events_check_job,
        hubspot_reconciliation_job,
        first_touch_sla_job,
        stale_lead_load_job,
        waiting_lead_owners_job,
        lead_contact_retrieval_job,
        outbound_messages_job,
    ],
    schedules=[
        lead_attribution_schedule,
        hubspot_engagement_schedule,
        deal_events_check_schedule,
        hubspot_reconciliation_schedule,
        stale_lead_load_schedule,
    ],
)
