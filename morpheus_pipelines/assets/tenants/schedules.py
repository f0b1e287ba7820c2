"""The daily job (snapshot, tenants, scores, Daily Summary) and its 07:30 CST schedule."""

import dagster as dg

DAILY_ASSETS = (
    "hubspot_target_accounts",
    "tenant_candidates",
    "enriched_tenants",
    "routed_tenants",
    "tenant_scores",
    "daily_summary",
)

# The Daily Summary's deadline check judges the day before's summary at 08:30, on its own
# schedule (assets/reports/deadline.py); in this run it would judge the wrong day.
DEADLINE_CHECK = dg.AssetCheckKey(dg.AssetKey("daily_summary"), "produced_by_deadline")

apac_daily_job = dg.define_asset_job(
    name="apac_daily_job",
    selection=dg.AssetSelection.assets(*DAILY_ASSETS) - dg.AssetSelection.checks(DEADLINE_CHECK),
    description="Snapshot, tenant selection, enrichment, routing, scores and the Daily "
    "Summary for one CST day.",
    # The steps are a chain (each waits for the one before), so a process per step buys no
    # parallelism and costs a code-location import per step. One process runs them in turn
    # (docs/decisions/0014).
    executor_def=dg.in_process_executor,
)

# Schedules start STOPPED: a deployment smoke-tests a run at full volume first, then turns
# them on in the UI. A daily partition is a finished CST day: at 07:30 on day D+1 the schedule
# runs partition D.
apac_daily_schedule = dg.build_schedule_from_partitioned_job(
    apac_daily_job, hour_of_day=7, minute_of_hour=30
)
