"""Data and state for the reliability suite: a larger generated tenant set, the emulators'
data, and a hash of the pipeline's tables to compare runs by."""

from __future__ import annotations

from morpheus_pipelines.devtools.emulators import build_hubspot_data
from tests.support.hubspot import TOKEN
from tests.support.pipeline import Pipeline, tenant

PARTITION = "2026-11-29"
SALES = "alice.sales@morpheus.example"

# Columns that legitimately differ between two runs (ids and clocks), not pipeline state.
VOLATILE = (
    "run_id",
    "updated_at",
    "decided_at",
    "hubspot_sync_id",
    "hubspot_snapshot_synced_at",
    "scored_at",
    "enrichment_ms",
    "enriched_at",
    "synced_at",
    "sync_id",
)
TABLES = (
    "apac_active_tenants",
    "apac_sales_owned_tenants",
    "apac_routing_decisions",
    "apac_enriched_tenants",
    "apac_tenant_score_snapshots",
    "apac_daily_summary_tenants",
)
# History columns record what really happened: after a successful but degraded run, the
# re-run genuinely moved tenants and changed priorities, and these columns say so.
HISTORY = (
    "moved",
    "moved_from",
    "entered_from",
    "bucket_entered_partition",
    "previous_priority",
    "priority_changed_partition",
    "change",
)
BUCKETS = ("apac_active_tenants", "apac_sales_owned_tenants")


def companies(count: int = 200) -> list[dict]:
    return [
        {
            "id": str(7000 + i),
            "name": f"Target {i}",
            "domain": f"target{i}.com.au",
            "portal_id__c": f"t{i:05d}" if i % 3 == 0 else None,
        }
        for i in range(count)
    ]


def tenants(count: int, *, sales_every: int = 0) -> list[dict]:
    """``count`` tenants; every 10th a target by email domain; every ``sales_every``-th
    owned by APAC Sales."""
    rows = []
    for i in range(count):
        email = f"ops@target{i % 200}.com.au" if i % 10 == 0 else f"u{i}@corp{i}.co.jp"
        owner = SALES if sales_every and i % sales_every == 1 else None
        rows.append(tenant(f"t{i:05d}", email=email, sales_owner_email=owner))
    return rows


def hubspot_data() -> dict:
    """The target list: the 200 companies of :func:`companies`."""
    return build_hubspot_data(companies(), token=TOKEN)


def domain_intel_data() -> dict:
    """Domain Intelligence knowing every 10th tenant (from t00005) by its official website,
    which is a target company's domain."""
    return {
        "tenants": {
            f"t{i:05d}": {
                "official_website": f"https://target{i % 200}.com.au",
                "country": "AU",
                "employee_count": 50,
            }
            for i in range(5, 400, 10)
        }
    }


def state(
    pipeline: Pipeline,
    *,
    ignore: tuple[str, ...] = (),
    last_change: bool = True,
    tables: tuple[str, ...] = TABLES,
) -> dict[str, str]:
    """A hash per table, ignoring ids, clocks and the ``ignore`` columns; with
    ``last_change=False`` also a bucket row's ``partition_key`` (the partition of the row's
    last change, which records the path taken rather than the state reached)."""
    present = {c for t in {*TABLES, *tables} for c in pipeline.columns(t)}
    assert set(ignore) <= present, f"no such columns: {set(ignore) - present}"
    ignored = (*VOLATILE, *ignore)
    return {
        t: pipeline.table_hash(
            t, exclude=(*ignored, "partition_key") if t in BUCKETS and not last_change else ignored
        )
        for t in tables
    }
