"""The code location: every slice, the policy they share, the resources (docs/pipeline.md).

Imported and built with the collector paused, since all of it lives as long as the process
(platform/heap.py).
"""

from __future__ import annotations

from morpheus_pipelines.platform.heap import built_for_the_process

OWNERS = ["team:sales-ops-data"]


def _shared_policy(spec: dg.AssetSpec) -> dg.AssetSpec:
    """Every asset lives in Postgres and is owned by the sales-ops data team, unless it names
    its owner (the DevOps source table); the freshness policy its cadence calls for
    (`assets/policies.py`)."""
    spec = spec.merge_attributes(owners=[] if spec.owners else OWNERS, kinds={"postgres"})
    policy = freshness_policy(spec)
    return spec if policy is None else spec.replace_attributes(freshness_policy=policy)


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


with built_for_the_process():
    import dagster as dg

    from morpheus_pipelines import sensors
    from morpheus_pipelines.assets import hubspot, leads, ownership, reports, tenants
    from morpheus_pipelines.assets.policies import freshness_policy
    from morpheus_pipelines.resources import build_resources

    defs = _code_location()
