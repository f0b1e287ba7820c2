"""The freshness check on its own schedule."""

import dagster as dg

from morpheus_pipelines.assets.hubspot.snapshot import snapshot_freshness
from morpheus_pipelines.platform.partitions import TIMEZONE

# The freshness check on its own: it only reads `apac_hubspot_target_sync_state` (no HubSpot
# call, nothing materialised), so the check in the UI turns red when the daily job stops
# instead of staying green until someone runs it with the asset.
snapshot_freshness_job = dg.define_asset_job(
    name="snapshot_freshness_job",
    selection=dg.AssetSelection.checks(snapshot_freshness),
    description="Evaluates the snapshot_freshness check of hubspot_target_accounts (reads the "
    "warehouse only; materialises nothing).",
)

# Unlike the pipeline schedules this one starts RUNNING: it is read-only and cheap.
snapshot_freshness_schedule = dg.ScheduleDefinition(
    name="snapshot_freshness_schedule",
    job=snapshot_freshness_job,
    cron_schedule="*/15 * * * *",
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Re-evaluates snapshot_freshness every 15 minutes.",
)
