"""The HubSpot slice: the target-account snapshot and its checks (docs/pipeline.md; its
freshness policy: docs/observability.md); the outbox that writes what
Morpheus decides to HubSpot, and the reps' daily call lists (docs/hubspot-outbox.md)."""

import dagster as dg

from morpheus_pipelines.assets.hubspot.outbox import (
    call_list_job,
    call_list_schedule,
    hubspot_outbox_delivery,
    hubspot_outbox_job,
    sales_rep_call_lists,
)
from morpheus_pipelines.assets.hubspot.snapshot import hubspot_target_accounts, snapshot_freshness

defs = dg.Definitions(
    assets=[hubspot_target_accounts, hubspot_outbox_delivery, sales_rep_call_lists],
    asset_checks=[snapshot_freshness],
    jobs=[hubspot_outbox_job, call_list_job],
    schedules=[call_list_schedule],
)
