"""The ``automation_firings`` asset: observed, not materialised, by the ``lead_automations``
sensor each time it fires nudges."""

import dagster as dg

from morpheus_pipelines.assets.leads.intake import ACTIVITIES, LEADS
from morpheus_pipelines.assets.metadata import tables_written

AUTOMATION_FIRINGS = dg.AssetSpec(
    "automation_firings",
    deps=[LEADS, ACTIVITIES],
    group_name="leads",
    kinds={"postgres"},
    metadata=tables_written("automation_firings", "outbound_messages"),
    description="Nudges sent by the automation rules, one per lead, rule and quiet period, "
    "each with its queued message. A rule fires when the lead has had no inbound activity on "
    "any channel and no call from a rep for its quiet period; a WhatsApp rule fires a set "
    "time before the 24-hour window closes and never outside it. Written by the "
    "lead_automations sensor.",
    tags={"domain": "leads"},
)
