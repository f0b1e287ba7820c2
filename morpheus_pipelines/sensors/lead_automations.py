"""Automations on evidence (docs/leads.md, "Automations"): every minute, nudge the leads that
have gone quiet on every channel, and report the firings on the ``automation_firings`` asset.

Silence is judged on the timeline, and reps' HubSpot calls reach it through the engagement
sync: until ``hubspot_engagements`` has materialised recently the sensor skips and says so,
whichever of the two was turned on first."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.assets.leads.automations import AUTOMATION_FIRINGS
from morpheus_pipelines.assets.leads.engagements import (
    hubspot_engagement_schedule,
    hubspot_engagements,
)
from morpheus_pipelines.assets.metadata import as_metadata
from morpheus_pipelines.crm.rules.timeline import ENGAGEMENT_SYNC_MAX_AGE, engagement_sync_missing
from morpheus_pipelines.crm.steps.lead_automations import fire_due_nudges
from morpheus_pipelines.resources.warehouse import WarehouseResource


def last_engagement_sync(instance: dg.DagsterInstance) -> datetime | None:
    """When ``hubspot_engagements`` last materialised (a failed run does not), or ``None``."""
    event = instance.get_latest_materialization_event(hubspot_engagements.key)
    return None if event is None else datetime.fromtimestamp(event.timestamp, UTC)


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Evaluates the automation rules against the unified timeline (evidence, not "
    "timers: a lead who replied on any channel, or whom a rep called, is not nudged) and "
    "records each firing in automation_firings with its queued message. Skips while "
    f"hubspot_engagements has not materialised in the last "
    f"{ENGAGEMENT_SYNC_MAX_AGE.total_seconds() / 3600:g} h (reps' calls would be missing).",
)
def lead_automations(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    now = datetime.now(UTC)
    missing = engagement_sync_missing(last_engagement_sync(context.instance), now)
    if missing:
        return dg.SkipReason(
            f"{missing}: materialise {hubspot_engagements.key.to_user_string()} "
            f"(turn on {hubspot_engagement_schedule.name})"
        )
    evaluation = fire_due_nudges(warehouse.session, now)
    if not evaluation.rules:
        return dg.SkipReason("no active automation rule")
    if not evaluation.firings:
        return dg.SkipReason(f"no nudge due under {len(evaluation.rules)} active rule(s)")
    metadata = {
        "dagster/row_count": len(evaluation.firings),
        "firings_by_rule": dict(evaluation.by_rule),
        "rules": {rule["name"]: rule["description"] for rule in evaluation.rules.values()},
        "evaluated_at": evaluation.evaluated_at,
    }
    return dg.SensorResult(
        asset_events=[
            dg.AssetObservation(asset_key=AUTOMATION_FIRINGS.key, metadata=as_metadata(metadata))
        ]
    )
