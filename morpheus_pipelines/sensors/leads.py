"""A sensor that runs the lead follow-up assets soon after leads arrive (docs/leads.md)."""

import dagster as dg

from morpheus_pipelines.crm.steps.lead_follow_up import backlog
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.sensor(
    job_name="lead_follow_up_job",
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Requests lead_follow_up_job when leads wait for enrichment or a duplicate "
    "check; one run per newest lead.",
)
def new_leads(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource
) -> dg.SensorResult | dg.SkipReason:
    waiting = backlog(warehouse.session)
    if not waiting["enrichment"] and not waiting["duplicates"]:
        return dg.SkipReason("no lead waits for enrichment or a duplicate check")
    newest = waiting["newest_lead"]
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"leads-{newest.isoformat()}")])
