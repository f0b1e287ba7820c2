"""Automations on evidence (docs/leads.md, "Automations"): every minute, nudge the leads that
have gone quiet on every channel, and report the firings on the ``automation_firings`` asset."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.assets.leads.automations import AUTOMATION_FIRINGS
from morpheus_pipelines.assets.metadata import as_metadata
from morpheus_pipelines.crm.steps.lead_automations import fire_due_nudges
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Evaluates the automation rules against the unified timeline (evidence, not "
    "timers: a lead who replied on any channel, or whom a rep called, is not nudged) and "
    "records each firing in automation_firings with its queued message.",
)
def lead_automations(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    evaluation = fire_due_nudges(warehouse.session, datetime.now(UTC))
    if not evaluation.rules:
        return dg.SkipReason("no active automation rule")
    if not evaluation.firings:
        return dg.SkipReason(f"no nudge due under {len(evaluation.rules)} active rule(s)")
    metadata = {
        "dagster/row_count": len(evaluation.firings),
        "firings_by_rule": dict(evaluation.by_rule),
        "rules": {rule["name"]: rule["description"] for rule in evaluation.rules.values()},
        "evaluated_at": evaluation.evaluated_at.isoformat(),
    }
    return dg.SensorResult(
        asset_events=[
            dg.AssetObservation(asset_key=AUTOMATION_FIRINGS.key, metadata=as_metadata(metadata))
        ]
    )
