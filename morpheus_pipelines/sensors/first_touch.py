"""A sensor that runs the first-touch SLA sweep when a lead's first touch is due or done
(docs/ownership.md, "First-touch SLA")."""

from datetime import UTC, datetime

import dagster as dg

from morpheus_pipelines.crm.steps.first_touch import first_touch_due
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.sensor(
    job_name="first_touch_sla_job",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests first_touch_sla_job when an open lead's first touch is past due or "
    "was made; at most one run a minute.",
)
def first_touch_due_leads(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    now = datetime.now(UTC)
    if not first_touch_due(warehouse.session, now=now):
        return dg.SkipReason("no lead's first touch is due or made")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"first-touch-{now:%Y%m%dT%H%M}")])
