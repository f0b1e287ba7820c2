"""Routing a partition's tenants into the two buckets (002 §2, §6, §7, §8).

The snapshot status decides whether HubSpot matching is used (``unavailable`` falls through to
the Sales-owned rule). Matching and precedence are the plain rules of ``rules.matching`` and
``rules.routing``; this module turns their output into bucket rows and decision rows and
writes each batch in one transaction through ``TenantBucketRepository.move_batch``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from sqlalchemy.orm import Session

from morpheus_pipelines.models.tenants import ENRICHMENT_COLUMNS
from morpheus_pipelines.observability import TenantEventLog
from morpheus_pipelines.repositories import (
    HubSpotTargetAccountRepository,
    RoutingDecisionRepository,
    TenantBucketRepository,
)
from morpheus_pipelines.repositories.tenant_bucket import ROUTED_COLUMNS
from morpheus_pipelines.rules.matching import SnapshotIndex, match_tenants, prepare_snapshot
from morpheus_pipelines.rules.routing import route_tenants
from morpheus_pipelines.services.hubspot_snapshot import SnapshotState, read_snapshot_state

_accounts = HubSpotTargetAccountRepository()
_buckets = TenantBucketRepository()
_decisions = RoutingDecisionRepository()

SessionFactory = Callable[[], AbstractContextManager[Session]]
FORCED_PRIORITY = "P0"


@dataclass(frozen=True)
class RoutingContext:
    """What every batch of one routing run shares."""

    partition_key: str
    run_id: str
    snapshot: SnapshotState
    index: SnapshotIndex | None
    sales_emails: frozenset[str]
    forced_ids: frozenset[str]


@dataclass
class RoutingTotals:
    tenants: int = 0
    batches: int = 0
    written: int = 0
    moved: int = 0
    rejected: int = 0
    by_bucket: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, other: RoutingTotals) -> None:
        self.tenants += other.tenants
        self.batches += other.batches
        self.written += other.written
        self.moved += other.moved
        self.rejected += other.rejected
        self.seconds += other.seconds
        for bucket, n in other.by_bucket.items():
            self.by_bucket[bucket] = self.by_bucket.get(bucket, 0) + n


def load_context(
    session: Session,
    *,
    list_id: str,
    partition_key: str,
    run_id: str,
    sales_emails: frozenset[str],
    forced_ids: frozenset[str],
    now: datetime | None = None,
) -> RoutingContext:
    """Read the snapshot state and, when it is usable, the snapshot itself (small)."""
    state = read_snapshot_state(session, list_id, now=now or datetime.now(UTC))
    index = None
    if state.status != "unavailable":
        index = prepare_snapshot(_accounts.load_frame(session))
    return RoutingContext(partition_key, run_id, state, index, sales_emails, forced_ids)


def route_frame(frame: pd.DataFrame, ctx: RoutingContext) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Decide a batch: returns (bucket rows for the routable tenants, decision rows for all).

    ``frame`` holds candidate and enrichment columns (``iter_partition_with_enrichment``).
    Rows with a ``rejection_reason`` get a decision row and no bucket.
    """
    frame = frame.reset_index(drop=True)
    for column in ENRICHMENT_COLUMNS:
        if column not in frame:
            frame[column] = None
    rejected = frame["rejection_reason"].notna().to_numpy()
    routable = frame.loc[~rejected].reset_index(drop=True)
    if ctx.index is not None and len(routable):
        matches = match_tenants(routable, ctx.index)
    else:
        matches = None
    routes = route_tenants(
        routable,
        matches,
        sales_emails=ctx.sales_emails,
        forced_ids=ctx.forced_ids,
        snapshot_status=ctx.snapshot.status,
    )
    bucket_rows = routable.copy()
    if matches is not None:
        # Domain classification from matching wins where enrichment did not run.
        for column in ("email_domain", "email_domain_class"):
            bucket_rows[column] = bucket_rows[column].where(
                bucket_rows[column].notna(), matches[column]
            )
    for column in (
        "tenant_bucket",
        "routing_rule",
        "priority_override",
        "hubspot_target",
        "hubspot_company_id",
        "hubspot_match_method",
    ):
        bucket_rows[column] = routes[column]
    target = routes["hubspot_target"].to_numpy(dtype=bool)
    # Snapshot evidence is kept on the rows the HubSpot rule decided; other rows would
    # otherwise change every day with the sync id and be rewritten for nothing.
    bucket_rows["hubspot_sync_id"] = np.where(target, ctx.snapshot.sync_id, None)
    bucket_rows["hubspot_snapshot_synced_at"] = pd.Series(
        np.where(target, ctx.snapshot.synced_at, None), dtype=object
    )
    bucket_rows["hubspot_snapshot_status"] = np.where(target, ctx.snapshot.status, None)
    decisions = pd.DataFrame(
        {
            "tenant_id": routable["tenant_id"],
            "source_type": routable["source_type"],
            "tenant_bucket": routes["tenant_bucket"],
            "routing_rule": routes["routing_rule"],
            "hubspot_company_id": routes["hubspot_company_id"],
            "hubspot_match_method": routes["hubspot_match_method"],
            "ambiguous_match": matches["ambiguous_match"] if matches is not None else False,
            "ambiguous_key": matches["ambiguous_key"] if matches is not None else None,
            "email_domain_class": bucket_rows["email_domain_class"],
            "sales_owned_match": routes["sales_owned_match"],
            "priority_override": routes["priority_override"],
            "priority_reason": routes["priority_reason"],
            "snapshot_status": ctx.snapshot.status,
            "hubspot_sync_id": ctx.snapshot.sync_id,
            "hubspot_snapshot_synced_at": ctx.snapshot.synced_at,
            "moved": False,
            "moved_from": None,
            "rejection_reason": None,
        }
    )
    if rejected.any():
        bad = frame.loc[rejected]
        decisions = pd.concat(
            [
                decisions,
                pd.DataFrame(
                    {
                        "tenant_id": bad["tenant_id"].to_numpy(),
                        "source_type": bad["source_type"].to_numpy(),
                        "tenant_bucket": None,
                        "routing_rule": "rejected",
                        "ambiguous_match": False,
                        "sales_owned_match": False,
                        "snapshot_status": ctx.snapshot.status,
                        "hubspot_sync_id": ctx.snapshot.sync_id,
                        "hubspot_snapshot_synced_at": ctx.snapshot.synced_at,
                        "moved": False,
                        "rejection_reason": bad["rejection_reason"].to_numpy(),
                    }
                ),
            ],
            ignore_index=True,
        )
    return bucket_rows, decisions


def write_batch(
    session_factory: SessionFactory,
    bucket_rows: pd.DataFrame,
    decisions: pd.DataFrame,
    ctx: RoutingContext,
    *,
    forced: bool = False,
) -> RoutingTotals:
    """One transaction: move the batch's tenants and record the decisions."""
    started = time.perf_counter()
    with session_factory() as session:
        result = _buckets.move_batch(
            session,
            bucket_rows,
            partition_key=ctx.partition_key,
            run_id=ctx.run_id,
            forced_priority=FORCED_PRIORITY if forced else None,
        )
        if result.moved_from:
            moved = decisions["tenant_id"].map(result.moved_from)
            decisions = decisions.assign(moved=moved.notna(), moved_from=moved)
        _decisions.record(session, decisions, partition_key=ctx.partition_key, run_id=ctx.run_id)
    counts = bucket_rows["tenant_bucket"].value_counts()
    return RoutingTotals(
        tenants=len(decisions),
        batches=1,
        written=sum(result.written.values()),
        moved=len(result.moved_from),
        rejected=int(decisions["rejection_reason"].notna().sum()),
        by_bucket={str(k): int(v) for k, v in counts.items()},
        seconds=time.perf_counter() - started,
    )


def route_batches(
    batches: Iterable[pd.DataFrame],
    session_factory: SessionFactory,
    ctx: RoutingContext,
    *,
    forced: bool = False,
    events: TenantEventLog | None = None,
    log: logging.Logger | None = None,
) -> RoutingTotals:
    """Route every batch, one transaction each; progress to ``log``, per-tenant events to
    ``events``."""
    totals = RoutingTotals()
    for frame in batches:
        started = time.perf_counter()
        if events is not None:
            events.tenants_started(frame, ctx, offset=totals.tenants)
        bucket_rows, decisions = route_frame(frame, ctx)
        batch = write_batch(session_factory, bucket_rows, decisions, ctx, forced=forced)
        if events is not None:
            events.tenants_completed(
                decisions, ctx, elapsed=time.perf_counter() - started, offset=totals.tenants
            )
        totals.add(batch)
        if log is not None:
            log.info(
                f"routing batch {totals.batches}: {batch.tenants:,} tenants "
                f"({totals.tenants:,} so far), {batch.moved} moved, {batch.seconds:.2f} s"
            )
    return totals


__all__ = [
    "ENRICHMENT_COLUMNS",
    "ROUTED_COLUMNS",
    "RoutingContext",
    "RoutingTotals",
    "load_context",
    "route_batches",
    "route_frame",
    "write_batch",
]
