"""``hubspot_target_accounts``: the validated local mirror of the HubSpot target list."""

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import dagster as dg

from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.assets.policies import EXTERNAL_SERVICE_RETRY
from morpheus_pipelines.resources.hubspot import HubSpotResource, TargetListResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.tenants.rules.snapshot_health import DEFAULT_MAX_AGE_HOURS, freshness
from morpheus_pipelines.tenants.rules.snapshot_validation import VALIDATION_RULES

if TYPE_CHECKING:
    from morpheus_pipelines.tenants.steps.hubspot_snapshot import SyncOutcome

ASSET_KEY = dg.AssetKey("hubspot_target_accounts")
REFRESH_CHECK = "snapshot_refresh_succeeded"
FRESHNESS_CHECK = "snapshot_freshness"

# One check per validation rule (docs/pipeline.md), plus one for the refresh transaction itself.
# Non-blocking: routing must still run on the last good snapshot after a failed sync.
SNAPSHOT_CHECK_SPECS = [
    dg.AssetCheckSpec(name=rule, asset=ASSET_KEY, description=text, blocking=False)
    for rule, text in VALIDATION_RULES.items()
] + [
    dg.AssetCheckSpec(
        name=REFRESH_CHECK,
        asset=ASSET_KEY,
        description="The refresh transaction committed: this run's snapshot is in place.",
        blocking=False,
    )
]


@dg.asset(
    metadata=tables_written("apac_hubspot_target_accounts", "apac_hubspot_target_sync_state"),
    key=ASSET_KEY,
    group_name="hubspot",
    retry_policy=EXTERNAL_SERVICE_RETRY,
    pool="hubspot_api",
    kinds={"hubspot"},
    check_specs=SNAPSHOT_CHECK_SPECS,
    tags={"domain": "hubspot"},
)
def hubspot_target_accounts(
    context: dg.AssetExecutionContext,
    hubspot: HubSpotResource,
    target_list: TargetListResource,
    warehouse: WarehouseResource,
) -> dg.MaterializeResult:
    """Latest complete, successful mirror of the HubSpot target-account list
    (`apac_hubspot_target_accounts`).

    Reads every membership page and every member company, validates the whole list in memory
    (docs/pipeline.md), then replaces the snapshot in one transaction (docs/pipeline.md). A failed
    sync keeps
    the previous snapshot untouched, records the attempt in `apac_hubspot_target_sync_state`
    and, when HubSpot is unavailable (429, 5xx, timeouts), does **not** fail the run: the
    checks turn red and routing uses the last good snapshot (`stale`) or no snapshot at all
    (`unavailable`). An answer that means a setting is wrong fails the asset, naming the
    variable: 401/403 `HUBSPOT_PRIVATE_APP_TOKEN`, 404 on the list `HUBSPOT_TARGET_LIST_ID`.
    """
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.hubspot_snapshot import sync_target_list

    with hubspot.get_client(context.log) as client:
        outcome = sync_target_list(
            client,
            warehouse.session,
            list_id=target_list.list_id,
            run_id=context.run.run_id,
            log=context.log,
        )
    _log_outcome(context.log, outcome)
    if outcome.configuration_error:
        # Configuration, not an outage: no retry mends it, and a green run would hide it.
        raise dg.Failure(
            description=outcome.configuration_error,
            metadata=as_metadata(_sync_metadata(outcome)),
            allow_retries=False,
        )
    return dg.MaterializeResult(
        metadata=as_metadata(_sync_metadata(outcome)), check_results=_check_results(outcome)
    )


def _log_outcome(log: logging.Logger, outcome: "SyncOutcome") -> None:
    state = outcome.state
    if outcome.succeeded:
        roots = outcome.roots
        log.info(
            f"snapshot refreshed: {outcome.rows_upserted} upserted, {outcome.rows_deleted} "
            f"deleted, sync {outcome.sync_id}"
            + (
                f"; domain roots: {roots.computed} computed, {roots.reused} as the last "
                "sync stored them"
                if roots is not None
                else ""
            )
        )
    else:
        log.warning(
            f"HubSpot sync failed ({outcome.error}); snapshot is {state.status}"
            + (f", {state.age_seconds / 3600:.1f} h old" if state.age_seconds is not None else "")
        )


def _check_results(outcome: "SyncOutcome") -> list[dg.AssetCheckResult]:
    """One result per validation rule, then the refresh transaction's."""
    check_results = [
        dg.AssetCheckResult(
            check_name=result.rule,
            passed=result.passed,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata=as_metadata(result.observed),
        )
        for result in outcome.validation
    ]
    check_results.append(
        dg.AssetCheckResult(
            check_name=REFRESH_CHECK,
            passed=outcome.succeeded,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata=as_metadata({"error": outcome.error, "snapshot_status": outcome.state.status}),
        )
    )
    return check_results


def _sync_metadata(outcome: "SyncOutcome") -> dict[str, object]:
    state = outcome.state
    return {
        "snapshot_status": state.status,
        "sync_id": outcome.sync_id,
        "snapshot_sync_id": state.sync_id,
        "snapshot_age_hours": state.age_hours,
        "list_total": outcome.list_total,
        "rows_upserted": outcome.rows_upserted,
        "rows_deleted": outcome.rows_deleted,
        # Whether the sync's roots came from the snapshot the last sync left: all computed
        # on a day the list did not change means the reuse was refused (docs/pipeline.md).
        "domain_roots_computed": outcome.roots.computed if outcome.roots is not None else None,
        "domain_roots_reused": outcome.roots.reused if outcome.roots is not None else None,
        "requests": outcome.requests,
        "retries": outcome.retries,
        "rate_limited_429s": outcome.rate_limited,
        "duration_seconds": round(outcome.duration_seconds, 3),
        "error": outcome.error,
        # The rows in the table: this run's list when the refresh committed; after a failed
        # sync the table is the previous snapshot (its materialisation has its count), or
        # empty and `unavailable`, so the count is left out rather than guessed.
        "dagster/row_count": outcome.list_total if outcome.succeeded else None,
    }


class SnapshotFreshnessConfig(dg.Config):
    max_age_hours: float = DEFAULT_MAX_AGE_HOURS


@dg.asset_check(asset=ASSET_KEY, name=FRESHNESS_CHECK, blocking=False)
def snapshot_freshness(
    config: SnapshotFreshnessConfig, target_list: TargetListResource, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    """Warns when the last successful HubSpot sync is older than `max_age_hours` (default
    26 h); fails with ERROR severity when no successful snapshot exists."""
    # The step brings pandas: imported by the run that executes it, not by the code location.
    from morpheus_pipelines.tenants.steps.hubspot_snapshot import read_snapshot_state

    with warehouse.session() as session:
        state = read_snapshot_state(session, target_list.list_id, now=datetime.now(UTC))
    passed, severity, summary = freshness(state.status, state.age_seconds, config.max_age_hours)
    return dg.AssetCheckResult(
        passed=passed,
        severity=dg.AssetCheckSeverity(severity),
        description=summary,
        metadata=as_metadata(
            {
                "snapshot_status": state.status,
                "snapshot_sync_id": state.sync_id,
                "last_successful_sync_at": state.synced_at,
                "snapshot_age_hours": state.age_hours,
                "max_age_hours": config.max_age_hours,
                "last_attempt_status": state.last_attempt_status,
                "last_error": state.last_error,
            }
        ),
    )
