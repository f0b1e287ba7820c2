"""The code location: every slice, the policy they share, the resources (docs/pipeline.md)."""

import dagster as dg

from morpheus_pipelines import sensors
from morpheus_pipelines.assets import hubspot, leads, ownership, reports, tenants
from morpheus_pipelines.resources import build_resources

OWNERS = ["team:sales-ops-data"]


def _shared_policy(spec: dg.AssetSpec) -> dg.AssetSpec:
    """Every asset is owned by the sales-ops data team and lives in Postgres."""
    return spec.merge_attributes(owners=OWNERS, kinds={"postgres"})


def _code_location() -> dg.Definitions:
    slices = dg.Definitions.merge(
        hubspot.defs, tenants.defs, reports.defs, ownership.defs, leads.defs, sensors.defs
    )
    return dg.Definitions(
        assets=dg.map_asset_specs(_shared_policy, slices.assets or []),
        asset_checks=slices.asset_checks,
        jobs=slices.jobs,
        schedules=slices.schedules,
        sensors=slices.sensors,
        resources=build_resources(),
        # Every step of these jobs and asset runs waits for the one before it, and a new
        # process per step costs the whole import again: assets materialised or backfilled
        # from the UI or `dagster asset materialize` run in one process, like apac_daily_job
        # (docs/decisions/0014).
        executor=dg.in_process_executor,
    )


defs = _code_location()
