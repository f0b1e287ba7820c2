"""The tables the lead intake API writes (`morpheus serve`, docs/leads.md): external assets,
never materialised here, declared so the assets that read them show where their input comes
from."""

import dagster as dg

from morpheus_pipelines.assets.metadata import tables_written

LEADS = dg.AssetSpec(
    "leads",
    group_name="leads",
    description="Leads as `morpheus serve` creates them (POST /v1/leads, browser forms, the "
    "ad-platform webhooks), each with its owner, created at intake. Written by "
    "`morpheus serve`; the assets below update their status, owner and enrichment.",
    metadata=tables_written("leads"),
    tags={"domain": "leads"},
)

ACTIVITIES = dg.AssetSpec(
    "activities",
    group_name="leads",
    description="The unified timeline: each lead's form submissions and inbound messages as "
    "`morpheus serve` records them. Written by `morpheus serve`; the HubSpot engagement "
    "sync and the message delivery add to it.",
    metadata=tables_written("activities"),
    tags={"domain": "leads"},
)
