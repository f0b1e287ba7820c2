"""The HubSpot slice: the target-account snapshot, its checks, and the freshness check on its
own 15-minute schedule (docs/pipeline.md, docs/partitions.md); the outbox that writes what
Morpheus decides to HubSpot, and the reps' daily call lists (docs/hubspot-outbox.md)."""

import dagster as dg

from morpheus_pipelines.assets.hubspot.outbox import (
    call_list_job,
    call_list_schedule,
    hubspot_outbox_delivery,
    hubspot_outbox_job,
    sales_rep_call_lists,
)
from morpheus_pipelines.assets.hubspot.schedules import (
    snapshot_freshness_job,
    snapshot_freshness_schedule,
)
from morpheus_pipelines.assets.hubspot.snapshot import hubspot_target_accounts, snapshot_freshness

defs = dg.Definitions(
    assets=[hubspot_target_accounts, hubspot_outbox_delivery, sales_rep_call_lists],
    asset_checks=[snapshot_freshness],
    jobs=[snapshot_freshness_job, hubspot_outbox_job, call_list_job],
    schedules=[snapshot_freshness_schedule, call_list_schedule],
)
