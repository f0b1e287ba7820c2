"""``stale_lead_load``: leads untouched too long stop counting toward their owner's open load
(docs/leads.md, "Open load")."""

import dagster as dg

from morpheus_pipelines.assets.leads.intake import ACTIVITIES, LEADS
from morpheus_pipelines.assets.metadata import tables_written
from morpheus_pipelines.crm.steps.lead_load import release_stale_leads
from morpheus_pipelines.platform.partitions import TIMEZONE
from morpheus_pipelines.platform.settings import load_settings
from morpheus_pipelines.resources.warehouse import WarehouseResource


@dg.asset(
    deps=[LEADS, ACTIVITIES],
    group_name="leads",
    kinds={"postgres"},
    metadata=tables_written("leads", "sales_reps"),
    tags={"domain": "leads"},
)
def stale_lead_load(warehouse: WarehouseResource) -> dg.MaterializeResult:
    """Open leads with no activity for `MORPHEUS_LEAD_STALE_DAYS` days (default 30; 0 =
    never) stop counting toward their rep's `openLeads`, so routing sees who is working what
    now; each is released once and stays open."""
    stale_days = load_settings().lead_stale_days
    released = release_stale_leads(warehouse.session, stale_days=stale_days)
    return dg.MaterializeResult(
        metadata={"released": dg.MetadataValue.int(released), "stale_days": stale_days}
    )


stale_lead_load_job = dg.define_asset_job(
    name="stale_lead_load_job",
    selection=dg.AssetSelection.assets(stale_lead_load),
    description="Release the open load of leads nobody touched for too long.",
)

stale_lead_load_schedule = dg.ScheduleDefinition(
    job=stale_lead_load_job,
    cron_schedule="15 6 * * *",
    execution_timezone=TIMEZONE,
    description="Daily, before the working day's first leads are routed.",
)
