"""``first_touch_sla``: the first touches recorded, the misses re-routed once, and the SLA
report per pool and rep (docs/ownership.md, "First-touch SLA")."""

import dagster as dg

from morpheus_pipelines.assets.leads.intake import ACTIVITIES, LEADS
from morpheus_pipelines.assets.metadata import as_metadata, tables_written
from morpheus_pipelines.crm.rules.first_touch import render_sla_markdown
from morpheus_pipelines.crm.steps.first_touch import sweep_first_touch
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    deps=[LEADS, ACTIVITIES],
    group_name="leads",
    metadata=tables_written("leads", "sales_reps", "hubspot_outbox"),
    tags={"domain": "leads"},
)
def first_touch_sla(warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Every open lead of a pool with a first-touch SLA whose owner has touched it (an
    outbound activity since its creation by that rep) is marked met; one past its deadline
    untouched is marked missed and re-routed once to the next assignable rep of its pool
    (never the same rep; never a lead whose owner a person chose), its HubSpot contact owner
    queued. The report: leads due in the last seven days, met, missed and % met, per pool and
    rep."""
    run = sweep_first_touch(warehouse.session)
    judged = sum(run.counts.values())
    return dg.MaterializeResult(
        metadata={
            **as_metadata({"outcomes": dict(run.counts) or None, "dagster/row_count": judged}),
            "report": dg.MetadataValue.md(render_sla_markdown(run.report, run.window)),
        }
    )


first_touch_sla_job = dg.define_asset_job(
    name="first_touch_sla_job",
    selection=dg.AssetSelection.assets(first_touch_sla),
    description="Record first touches and re-route the leads that missed their SLA.",
)
