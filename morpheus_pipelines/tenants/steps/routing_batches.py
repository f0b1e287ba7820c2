"""Routing one batch of a partition's tenants: the snapshot and context a run routes against,
the frame of bucket rows and decision rows a batch becomes (matching and precedence are the
plain rules of ``tenants.rules.matching`` and ``tenants.rules.routing``), and its write in one
transaction through ``TenantBucketRepository.move_batch``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.store.write_behind import write_behind
from morpheus_pipelines.platform.versions import normalisation
from morpheus_pipelines.tenants.rules.matching import SnapshotIndex, match_tenants, prepare_snapshot
from morpheus_pipelines.tenants.rules.routing import route_tenants
from morpheus_pipelines.tenants.rules.routing_inputs import snapshot_preparation, tenant_keys
from morpheus_pipelines.tenants.rules.vocabulary import RoutingRule
from morpheus_pipelines.tenants.steps.hubspot_snapshot import SnapshotState, read_snapshot_state
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog
from morpheus_pipelines.tenants.store.models.tenants import ENRICHMENT_COLUMNS
from morpheus_pipelines.tenants.store.routing_decision import DECISION_COLUMNS, INPUT_COLUMNS
from morpheus_pipelines.tenants.store.store import TenantStore

FORCED_PRIORITY = "P0"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SnapshotView:
    """The snapshot one routing run uses for every partition it routes."""

    state: SnapshotState
    index: SnapshotIndex | None
    # Whether the index was read as kept from an earlier run (False: prepared by this one).
    index_kept: bool = False

    @property
    def prepared(self) -> str | None:
        """How the run has the snapshot prepared for matching: ``kept`` (an earlier run's,
        read back), ``prepared`` (by this run), None (the snapshot is not used)."""
        if self.index is None:
            return None
        return "kept" if self.index_kept else "prepared"


@dataclass(frozen=True)
class RoutingContext:
    """What every batch of one partition's routing shares."""

    partition_key: str
    run_id: str
    snapshot: SnapshotState
    index: SnapshotIndex | None
    sales_emails: frozenset[str]
    forced_ids: frozenset[str]
    # The newest routed partition: writes the live bucket tables. An older one (a backfill or
    # a late re-run) writes its decision record only.
    live: bool = True


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


def load_snapshot(
    session: Session,
    *,
    list_id: str,
    run_ids: Iterable[str] | None,
    now: datetime | None = None,
    log: logging.Logger | None = None,
) -> SnapshotView:
    """Read the snapshot state (``fresh`` only when a sync of ``run_ids`` — the run and the
    runs it re-executes — succeeded) and, when it is usable, the snapshot prepared for
    matching: as kept by an earlier run when its content and the rules are the same, else
    prepared from the table and kept (docs/pipeline.md, "The prepared snapshot")."""
    state = read_snapshot_state(session, list_id, now=now or datetime.now(UTC), run_ids=run_ids)
    if state.status == "unavailable":
        return SnapshotView(state, None)
    index, kept = _prepared_snapshot(session, log or logger)
    return SnapshotView(state, index, index_kept=kept)


def _prepared_snapshot(session: Session, log: logging.Logger) -> tuple[SnapshotIndex, bool]:
    """The snapshot prepared for matching, and whether an earlier run's was read."""
    store = TenantStore(session)
    digest = store.accounts.matching_digest(session)
    preparation = snapshot_preparation(normalisation())
    kept = store.prepared_snapshots.document(
        session, content_digest=digest, preparation=preparation
    )
    if kept is not None:
        try:
            return SnapshotIndex.from_json(kept), True
        except ValueError as exc:
            log.warning(f"the kept prepared snapshot is unreadable ({exc})")
    # Kept under the md5 of the rows read, which a sync committed since the one above changes.
    frame, digest = store.accounts.load_frame_with_digest(session)
    index = prepare_snapshot(frame)
    try:
        # Keeping it saves the next run's time; failing to must not fail this one.
        with session.begin_nested():
            store.prepared_snapshots.keep(
                session, content_digest=digest, preparation=preparation, document=index.to_json()
            )
    except SQLAlchemyError as exc:
        log.warning(f"could not keep the prepared snapshot: {type(exc).__name__}")
    return index, False


def load_context(
    session: Session,
    *,
    snapshot: SnapshotView,
    partition_key: str,
    run_id: str,
    sales_emails: frozenset[str],
    forced_ids: frozenset[str],
) -> RoutingContext:
    """Everything one partition's routing shares; ``live`` when no newer partition has been
    routed."""
    decisions = TenantStore(session).decisions
    newer = decisions.superseding_partition(session, partition_key=partition_key)
    return RoutingContext(
        partition_key,
        run_id,
        snapshot.state,
        snapshot.index,
        sales_emails,
        forced_ids,
        live=newer is None,
    )


def route_frame(
    frame: pd.DataFrame, routing_context: RoutingContext
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Decide a batch: returns (bucket rows for the routable tenants, decision rows for all).

    ``frame`` holds candidate and enrichment columns (``iter_partition_with_enrichment``).
    Rows with a ``rejection_reason`` get a decision row and no bucket.
    """
    frame = _with_enrichment_columns(frame)
    rejected = frame["rejection_reason"].notna().to_numpy()
    routable = frame.loc[~rejected].reset_index(drop=True)
    matches = _match(routable, routing_context)
    routes = route_tenants(
        routable,
        matches,
        sales_emails=routing_context.sales_emails,
        forced_ids=routing_context.forced_ids,
        snapshot_status=routing_context.snapshot.status,
    )
    bucket_rows = _bucket_rows(routable, routes, matches, routing_context)
    decisions = _routed_decisions(routable, routes, matches, bucket_rows, routing_context)
    if rejected.any():
        bad = frame.loc[rejected].reset_index(drop=True)
        rows = unrouted_decisions(
            bad,
            routing_context,
            rule=RoutingRule.REJECTED.value,
            bucket=None,
            rejection_reason=bad["rejection_reason"],
        )
        decisions = pd.concat([decisions, rows], ignore_index=True)
    return bucket_rows, decisions


def _with_enrichment_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` re-indexed from 0, with every enrichment column (None where enrichment did
    not run: the forced ids, a tenant it skipped)."""
    frame = frame.reset_index(drop=True)
    for column in ENRICHMENT_COLUMNS:
        if column not in frame:
            frame[column] = None
    return frame


def _match(routable: pd.DataFrame, routing_context: RoutingContext) -> pd.DataFrame | None:
    """The routable tenants' HubSpot matches; None when the snapshot is not used."""
    if routing_context.index is not None and len(routable):
        return match_tenants(routable, routing_context.index)
    return None


def _bucket_rows(
    routable: pd.DataFrame,
    routes: pd.DataFrame,
    matches: pd.DataFrame | None,
    routing_context: RoutingContext,
) -> pd.DataFrame:
    """The routable tenants' rows for their bucket table: candidate and enrichment columns,
    the route, and the snapshot the routing was decided with."""
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
    # The snapshot the routing was decided with, on every routed row (matched or not).
    bucket_rows["hubspot_sync_id"] = routing_context.snapshot.sync_id
    bucket_rows["hubspot_snapshot_synced_at"] = pd.Series(
        [routing_context.snapshot.synced_at] * len(bucket_rows), dtype=object
    )
    bucket_rows["hubspot_snapshot_status"] = routing_context.snapshot.status
    return bucket_rows


def _routed_decisions(
    routable: pd.DataFrame,
    routes: pd.DataFrame,
    matches: pd.DataFrame | None,
    bucket_rows: pd.DataFrame,
    routing_context: RoutingContext,
) -> pd.DataFrame:
    """The decision rows (and routing inputs) of the routable tenants."""
    return pd.DataFrame(
        {
            "tenant_id": routable["tenant_id"],
            "source_type": routable["source_type"],
            "tenant_bucket": routes["tenant_bucket"],
            "routing_rule": routes["routing_rule"],
            "hubspot_company_id": routes["hubspot_company_id"],
            "hubspot_match_method": routes["hubspot_match_method"],
            "ambiguous_match": matches["ambiguous_match"] if matches is not None else False,
            "ambiguous_key": matches["ambiguous_key"] if matches is not None else None,
            "name_hint_company_id": (
                matches["name_hint_company_id"] if matches is not None else None
            ),
            "email_domain_class": bucket_rows["email_domain_class"],
            "sales_owned_match": routes["sales_owned_match"],
            "priority_override": routes["priority_override"],
            "priority_reason": routes["priority_reason"],
            "snapshot_status": routing_context.snapshot.status,
            "hubspot_sync_id": routing_context.snapshot.sync_id,
            "hubspot_snapshot_synced_at": routing_context.snapshot.synced_at,
            "moved": False,
            "moved_from": None,
            "rejection_reason": None,
            "candidate_version": routable.get("candidate_version"),
            "answer_version": routable.get("answer_version"),
            **tenant_keys(routable, matches),
        }
    )


def write_batch(
    session_factory: SessionFactory,
    bucket_rows: pd.DataFrame,
    decisions: pd.DataFrame,
    routing_context: RoutingContext,
    *,
    forced: bool = False,
) -> RoutingTotals:
    """One transaction: move the batch's tenants and record the decisions."""
    started = time.perf_counter()
    written = 0
    moved_from: dict[str, str] = {}
    with session_factory() as session:
        store = TenantStore(session)
        if routing_context.live:
            result = store.buckets.move_batch(
                session,
                bucket_rows,
                partition_key=routing_context.partition_key,
                run_id=routing_context.run_id,
                forced_priority=FORCED_PRIORITY if forced else None,
            )
            written, moved_from = sum(result.written.values()), result.moved_from
            store.routing_inputs.record(
                session,
                decisions[decisions["candidate_version"].notna()],
                partition_key=routing_context.partition_key,
                run_id=routing_context.run_id,
            )
        if moved_from:
            moved = decisions["tenant_id"].map(moved_from)
            decisions = decisions.assign(moved=moved.notna(), moved_from=moved)
        store.decisions.record(
            session,
            decisions,
            partition_key=routing_context.partition_key,
            run_id=routing_context.run_id,
        )
    counts = bucket_rows["tenant_bucket"].value_counts()
    return RoutingTotals(
        tenants=len(decisions),
        batches=1,
        written=written,
        moved=len(moved_from),
        rejected=int(decisions["rejection_reason"].notna().sum()),
        by_bucket={str(k): int(v) for k, v in counts.items()},
        seconds=time.perf_counter() - started,
    )


def route_batches(
    batches: Iterable[pd.DataFrame],
    session_factory: SessionFactory,
    routing_context: RoutingContext,
    *,
    forced: bool = False,
    events: TenantEventLog | None = None,
    log: logging.Logger | None = None,
    offset: int = 0,
    record_count: int | None = None,
) -> RoutingTotals:
    """Route every batch, one transaction each, written while the next batch is read and
    decided; progress to ``log``, per-tenant events to ``events`` (record indexes start at
    ``offset``)."""
    totals = RoutingTotals()

    def write(batch: tuple[pd.DataFrame, pd.DataFrame]) -> RoutingTotals:
        return write_batch(session_factory, *batch, routing_context, forced=forced)

    def written(
        decisions: pd.DataFrame, deciding: float, first: int
    ) -> Callable[[RoutingTotals], None]:
        def account(batch: RoutingTotals) -> None:
            if events is not None:
                # The batch's own time: deciding it and writing it, not the next batch's
                # work that overlapped the write.
                events.tenants_completed(
                    decisions,
                    routing_context,
                    elapsed=deciding + batch.seconds,
                    offset=first,
                )
            totals.add(batch)
            if log is not None:
                log.info(
                    f"routing batch {totals.batches}: {batch.tenants:,} tenants "
                    f"({totals.tenants:,} so far), {batch.moved} moved, {batch.seconds:.2f} s"
                )

        return account

    first = offset
    with write_behind(write) as writer:
        for frame in batches:
            writer.raise_if_failed()
            started = time.perf_counter()
            if events is not None:
                events.tenants_started(
                    frame, routing_context, offset=first, record_count=record_count
                )
            bucket_rows, decisions = route_frame(frame, routing_context)
            deciding = time.perf_counter() - started
            writer.submit((bucket_rows, decisions), then=written(decisions, deciding, first))
            first += len(decisions)
    return totals


def unrouted_decisions(
    tenants: pd.DataFrame,
    routing_context: RoutingContext,
    *,
    rule: str,
    bucket: pd.Series | None,
    rejection_reason: pd.Series | None = None,
) -> pd.DataFrame:
    """Decision rows (every ``DECISION_COLUMNS``) of tenants no rule routed: a rejected
    candidate (no bucket) or a retirement (the bucket the row stays in, retired)."""
    values = {
        "tenant_id": tenants["tenant_id"],
        "source_type": tenants["source_type"],
        "tenant_bucket": bucket,
        "routing_rule": rule,
        "ambiguous_match": False,
        "sales_owned_match": False,
        "snapshot_status": routing_context.snapshot.status,
        "hubspot_sync_id": routing_context.snapshot.sync_id,
        "hubspot_snapshot_synced_at": routing_context.snapshot.synced_at,
        "moved": False,
        "rejection_reason": rejection_reason,
        "candidate_version": tenants.get("candidate_version"),
        "answer_version": tenants.get("answer_version"),
    }
    columns = (*DECISION_COLUMNS, *INPUT_COLUMNS[1:])
    return pd.DataFrame({column: values.get(column) for column in columns}, index=tenants.index)
