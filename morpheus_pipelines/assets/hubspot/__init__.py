"""The HubSpot slice: the target-account snapshot, its checks, and the freshness check on its
own 15-minute schedule (docs/pipeline.md, docs/partitions.md)."""

import dagster as dg

from morpheus_pipelines.assets.hubspot.schedules import (
    snapshot_freshness_job,
    snapshot_freshness_schedule,
)
from morpheus_pipelines.assets.hubspot.snapshot import hubspot_target_accounts, snapshot_freshness

defs = dg.Definitions(
    assets=[hubspot_target_accounts],
    asset_checks=[snapshot_freshness],
    jobs=[snapshot_freshness_job],
    schedules=[snapshot_freshness_schedule],
)
