"""Daily tenant assets: selection, enrichment and bucket routing (002 §2, §3.2, §6–§8)."""

import contextlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pandas as pd
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.assets.hubspot import ASSET_KEY as HUBSPOT_TARGET_ACCOUNTS
from morpheus_pipelines.assets.metadata import metadata
from morpheus_pipelines.clients.domain_intelligence import DomainIntelligenceClient
from morpheus_pipelines.models import (
    RoutingDecision,
    SalesOwnedTenant,
    TenantCandidate,
)
from morpheus_pipelines.observability import TenantEventLog
from morpheus_pipelines.partitions import daily_partitions
from morpheus_pipelines.repositories import (
    EnrichedTenantRepository,
    RoutingDecisionRepository,
    TenantBucketRepository,
    TenantCandidateRepository,
)
from morpheus_pipelines.repositories.tenant_candidate import CANDIDATE_SOURCE_COLUMNS
from morpheus_pipelines.resources.domain_intelligence import DomainIntelligenceResource
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.routing import TenantRoutingResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from morpheus_pipelines.services.chunks import iter_chunks
from morpheus_pipelines.services.enrichment import enrich_candidates
from morpheus_pipelines.services.tenant_routing import RoutingContext, load_context, route_batches
from morpheus_pipelines.services.tenant_selection import stream_candidates

_candidates = TenantCandidateRepository()
_enriched = EnrichedTenantRepository()
_buckets = TenantBucketRepository()
_decisions = RoutingDecisionRepository()

GROUP = "tenants"


def _context(
    warehouse: WarehouseResource,
    hubspot: HubSpotResource,
    routing: TenantRoutingResource,
    partition_key: str,
    run_id: str,
) -> RoutingContext:
    with warehouse.session() as session:
        return load_context(
            session,
            list_id=hubspot.target_list_id,
            partition_key=partition_key,
            run_id=run_id,
            sales_emails=routing.sales_emails,
            forced_ids=routing.forced_ids,
        )


def _candidate_chunks(
    warehouse: WarehouseResource, partition_key: str, *, forced: bool, size: int
) -> Iterator[pd.DataFrame]:
    def read(session: Session, after: str | None, limit: int) -> pd.DataFrame:
        return _candidates.read_with_enrichment(
            session, partition_key=partition_key, forced=forced, after=after, limit=limit
        )

    return iter_chunks(warehouse.session, read, size=size)


def event_log(warehouse: WarehouseResource, partition_key: str) -> TenantEventLog:
    return TenantEventLog(
        Path(warehouse.home) / "logs" / "tenant_events" / f"{partition_key}.jsonl"
    )


@dg.asset(
    partitions_def=daily_partitions,
    group_name=GROUP,
    kinds={"postgres"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    owners=["team:sales-ops-data"],
)
def tenant_candidates(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    hubspot: HubSpotResource,
    routing: TenantRoutingResource,
) -> dg.MaterializeResult:
    """APAC tenants to route for the partition's CST day (`apac_tenant_candidates`).

    Active candidates are the current state (region APAC, status not `free_trial`, `new_user`
    or `closing`); signups are those created in the partition's CST day `[00:00, 24:00)`. A
    tenant in both is selected once as `signup`. Re-running replaces the partition's rows.
    The `FORCED_SALES_OWNED_TENANT_IDS` take the fast path here: straight to
    `apac_sales_owned_tenants` with priority P0, no enrichment and no scoring.
    """
    per_partition = {}
    for partition_key in context.partition_keys:
        with warehouse.source_session() as source, warehouse.session() as session:
            staging = _candidates.stream_into_staging(
                session,
                stream_candidates(source, warehouse.source_schema, partition_key),
                columns=CANDIDATE_SOURCE_COLUMNS,
            )
            written = _candidates.replace_partition(
                session,
                staging,
                partition_key=partition_key,
                run_id=context.run.run_id,
                forced_ids=routing.forced_ids,
            )
        ctx = _context(warehouse, hubspot, routing, partition_key, context.run.run_id)
        forced = route_batches(
            _candidate_chunks(warehouse, partition_key, forced=True, size=routing.batch_size),
            warehouse.session,
            ctx,
            forced=True,
            log=context.log,
        )
        with warehouse.session() as session:
            counts = _candidates.partition_counts(session, partition_key=partition_key)
        counts["rows_written"] = written
        counts["forced_routed"] = forced.tenants
        per_partition[partition_key] = counts
        context.log.info(f"{partition_key}: {counts}")
    total = sum(c["total"] for c in per_partition.values())
    last = per_partition[context.partition_keys[-1]]
    return dg.MaterializeResult(
        metadata=metadata(
            {
                "dagster/row_count": total,
                "active_candidates": last["active"],
                "signups": last["signup"],
                "forced_sales_owned": last["forced_sales_owned"],
                "rejected": last["rejected"],
                "rows_written": sum(c["rows_written"] for c in per_partition.values()),
                "partitions": per_partition if len(per_partition) > 1 else None,
            }
        )
    )


@dg.asset(
    partitions_def=daily_partitions,
    deps=[tenant_candidates],
    group_name=GROUP,
    kinds={"postgres"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    owners=["team:sales-ops-data"],
)
def enriched_tenants(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    domain_intelligence: DomainIntelligenceResource,
    routing: TenantRoutingResource,
) -> dg.MaterializeResult:
    """Email-domain class and Domain Intelligence results per candidate
    (`apac_enriched_tenants`).

    When `DOMAIN_INTELLIGENCE_BASE_URL` is unset or the service fails, the tenants are
    recorded as `unavailable` and the pipeline continues: routing never waits on enrichment.
    Forced Sales-owned tenants are not enriched.
    """
    client = domain_intelligence.get_client(context.log)
    with client if client is not None else contextlib.nullcontext():
        return _enrich_partitions(context, warehouse, client, routing.batch_size)


def _enrich_partitions(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    client: DomainIntelligenceClient | None,
    batch_size: int,
) -> dg.MaterializeResult:
    status_counts: dict[str, int] = {}
    written = requests = failed_batches = tenants = 0
    for partition_key in context.partition_keys:
        for chunk in _candidate_chunks(warehouse, partition_key, forced=False, size=batch_size):
            routable = chunk.loc[chunk["rejection_reason"].isna(), ["tenant_id", "name", "email"]]
            result = enrich_candidates(routable, client, log=context.log, run_id=context.run.run_id)
            with warehouse.session() as session:
                written += _enriched.upsert_chunk(
                    session, result.frame, partition_key=partition_key, run_id=context.run.run_id
                )
            tenants += len(routable)
            requests += result.requests
            failed_batches += result.failed_batches
            for status, n in result.status_counts.items():
                status_counts[status] = status_counts.get(status, 0) + n
        with warehouse.session() as session:
            written += _enriched.delete_orphans(session, partition_key=partition_key)
    return dg.MaterializeResult(
        metadata=metadata(
            {
                "dagster/row_count": tenants,
                "service_configured": client is not None,
                "by_enrichment_status": status_counts,
                "requests": requests,
                "failed_batches": failed_batches,
                "rows_written": written,
            }
        )
    )


ROUTING_CHECKS = {
    "buckets_disjoint": "No tenant is in both apac_active_tenants and apac_sales_owned_tenants.",
    "every_candidate_routed_once": "Every candidate of the partition has exactly one decision.",
    "no_sales_owned_hubspot_target": "No Sales-owned row is marked as a HubSpot target.",
    "forced_ids_sales_owned": "Every forced id that is a candidate is Sales-owned.",
}


@dg.asset(
    partitions_def=daily_partitions,
    deps=[enriched_tenants, HUBSPOT_TARGET_ACCOUNTS],
    group_name=GROUP,
    kinds={"postgres"},
    backfill_policy=dg.BackfillPolicy.single_run(),
    check_specs=[
        dg.AssetCheckSpec(name=name, asset="routed_tenants", description=text)
        for name, text in ROUTING_CHECKS.items()
    ],
    owners=["team:sales-ops-data"],
)
def routed_tenants(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    hubspot: HubSpotResource,
    routing: TenantRoutingResource,
) -> dg.MaterializeResult:
    """Each candidate in exactly one bucket: `apac_active_tenants` or
    `apac_sales_owned_tenants`, with the decision in `apac_routing_decisions`.

    Precedence (002 §2): forced ids → Sales-owned; a HubSpot target-account match (when the
    snapshot is `fresh` or `stale`) → Active with a P0 override; an exact APAC Sales owner →
    Sales-owned; else Active. Each batch is one transaction that upserts the destination,
    carries score and tracking fields over, and deletes the tenant from the other table.
    """
    summaries = {}
    for partition_key in context.partition_keys:
        ctx = _context(warehouse, hubspot, routing, partition_key, context.run.run_id)
        context.log.info(
            f"{partition_key}: snapshot {ctx.snapshot.status}"
            + (f", sync {ctx.snapshot.sync_id}" if ctx.snapshot.sync_id else "")
        )
        route_batches(
            _candidate_chunks(warehouse, partition_key, forced=False, size=routing.batch_size),
            warehouse.session,
            ctx,
            events=event_log(warehouse, partition_key),
            log=context.log,
        )
        with warehouse.session() as session:
            summaries[partition_key] = _decisions.summary(session, partition_key=partition_key)
    partition_key = context.partition_keys[-1]
    with warehouse.session() as session:
        observed = _routing_check_figures(session, partition_key, routing.forced_ids)
    summary = summaries[partition_key]
    return dg.MaterializeResult(
        metadata=metadata(
            {
                "dagster/row_count": summary["totals"]["decisions"],
                "snapshot_status": ctx.snapshot.status,
                "snapshot_sync_id": ctx.snapshot.sync_id,
                "by_bucket": summary["by_bucket"],
                "by_rule": summary["by_rule"],
                "by_match_method": summary["by_match_method"],
                "by_email_domain_class": summary["by_email_domain_class"],
                "moved": summary["totals"]["moved"],
                "moved_from": summary["by_moved_from"],
                "ambiguous": summary["totals"]["ambiguous"],
                "rejected": summary["totals"]["rejected"],
                "free_mail": summary["by_email_domain_class"].get("free", 0),
            }
        ),
        check_results=[
            dg.AssetCheckResult(
                check_name=name,
                passed=observed[name] == 0,
                metadata={"violations": observed[name]},
            )
            for name in ROUTING_CHECKS
        ],
    )


def _routing_check_figures(session, partition_key: str, forced_ids: frozenset[str]) -> dict:
    """Violation counts for the routing checks (0 everywhere when routing is right)."""
    candidates = select(TenantCandidate.tenant_id).where(
        TenantCandidate.partition_key == partition_key
    )
    unrouted = session.scalar(
        select(func.count())
        .select_from(TenantCandidate)
        .outerjoin(
            RoutingDecision,
            (RoutingDecision.partition_key == TenantCandidate.partition_key)
            & (RoutingDecision.tenant_id == TenantCandidate.tenant_id),
        )
        .where(TenantCandidate.partition_key == partition_key, RoutingDecision.tenant_id.is_(None))
    )
    extra = session.scalar(
        select(func.count())
        .select_from(RoutingDecision)
        .where(
            RoutingDecision.partition_key == partition_key,
            RoutingDecision.tenant_id.not_in(candidates),
        )
    )
    forced_not_sales = 0
    if forced_ids:
        forced_not_sales = session.scalar(
            select(func.count())
            .select_from(TenantCandidate)
            .outerjoin(SalesOwnedTenant, SalesOwnedTenant.tenant_id == TenantCandidate.tenant_id)
            .where(
                TenantCandidate.partition_key == partition_key,
                TenantCandidate.tenant_id.in_(sorted(forced_ids)),
                SalesOwnedTenant.tenant_id.is_(None),
            )
        )
    return {
        "buckets_disjoint": _buckets.overlap_count(session),
        "every_candidate_routed_once": (unrouted or 0) + (extra or 0),
        "no_sales_owned_hubspot_target": session.scalar(
            select(func.count())
            .select_from(SalesOwnedTenant)
            .where(SalesOwnedTenant.hubspot_target)
        )
        or 0,
        "forced_ids_sales_owned": forced_not_sales or 0,
    }
