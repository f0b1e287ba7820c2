"""Routing a partition's tenants into the two buckets (docs/pipeline.md).

The snapshot status decides whether HubSpot matching is used (``unavailable`` falls through to
the Sales-owned rule). Matching and precedence are the plain rules of ``rules.matching`` and
``rules.routing``; this module turns their output into bucket rows and decision rows and
writes each batch in one transaction through ``TenantBucketRepository.move_batch``.

Only the newest routed partition writes the live bucket tables; an older partition (a
backfill, a late re-run) rewrites its own decision record and nothing else, and a live run
retires the bucket rows it no longer selects (docs/partitions.md, "What a backfill changes").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pandas as pd
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.phases import phase
from morpheus_pipelines.platform.store.write_behind import write_behind
from morpheus_pipelines.tenants.rules.matching import SnapshotIndex, match_tenants, prepare_snapshot
from morpheus_pipelines.tenants.rules.routing import HUBSPOT_SNAPSHOT_USABLE_STATUSES, route_tenants
from morpheus_pipelines.tenants.rules.routing_inputs import rule_inputs, tenant_keys
from morpheus_pipelines.tenants.rules.routing_plan import RoutingPlan, base_needed, routing_plan
from morpheus_pipelines.tenants.rules.vocabulary import RoutingRule
from morpheus_pipelines.tenants.steps.hubspot_snapshot import SnapshotState, read_snapshot_state
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog
from morpheus_pipelines.tenants.steps.tenant_selection import candidate_chunks
from morpheus_pipelines.tenants.store.models.tenants import ENRICHMENT_COLUMNS
from morpheus_pipelines.tenants.store.routing_decision import (
    DECISION_COLUMNS,
    INPUT_COLUMNS,
    RETIRED_RULE,
)
from morpheus_pipelines.tenants.store.store import TenantStore
from morpheus_pipelines.tenants.store.tenant_bucket import ROUTED_COLUMNS

FORCED_PRIORITY = "P0"


@dataclass(frozen=True)
class SnapshotView:
    """The snapshot one routing run uses for every partition it routes."""

    state: SnapshotState
    index: SnapshotIndex | None


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
) -> SnapshotView:
    """Read the snapshot state (``fresh`` only when a sync of ``run_ids`` — the run and the
    runs it re-executes — succeeded) and, when it is usable, the snapshot itself (small)."""
    state = read_snapshot_state(session, list_id, now=now or datetime.now(UTC), run_ids=run_ids)
    index = None
    if state.status != "unavailable":
        index = prepare_snapshot(TenantStore(session).accounts.load_frame(session))
    return SnapshotView(state, index)


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
            "input_fingerprint": routable.get("input_fingerprint"),
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
                decisions[decisions["input_fingerprint"].notna()],
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


@dataclass
class PartitionRouting:
    """What routing one partition did, for metadata and checks."""

    partition_key: str
    live: bool
    totals: RoutingTotals
    forced: int
    retired: int
    orphans_removed: int
    summary: dict[str, dict[str, int]]
    check_violations: dict[str, int]
    missing_forced_ids: list[str]
    # Decisions copied unchanged from the partition routed before (incremental routing), and
    # why routing decided what it decided.
    carried: int = 0
    plan: str = ""
    phases: dict[str, float] = field(default_factory=dict)


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
        "input_fingerprint": tenants.get("input_fingerprint"),
    }
    columns = (*DECISION_COLUMNS, *INPUT_COLUMNS[1:])
    return pd.DataFrame({column: values.get(column) for column in columns}, index=tenants.index)


def plan_routing(
    session: Session,
    routing_context: RoutingContext,
    *,
    incremental: bool,
) -> RoutingPlan:
    """Compare the run's rules' inputs with those of the partition routed before it."""
    inputs = rule_inputs(
        routing_context.index,
        snapshot_usable=routing_context.snapshot.status in HUBSPOT_SNAPSHOT_USABLE_STATUSES,
        sync_id_known=routing_context.snapshot.sync_id is not None,
        sales_emails=routing_context.sales_emails,
        forced_ids=routing_context.forced_ids,
    )
    base = None
    if base_needed(incremental=incremental, live=routing_context.live):
        store = TenantStore(session)
        base = store.routing_states.base_for(session, partition_key=routing_context.partition_key)
    return routing_plan(inputs, base=base, incremental=incremental, live=routing_context.live)


@dataclass
class RoutingRun:
    """One partition's routing as its phases pass it on: what the plan phase read, and where
    the phases report."""

    session_factory: SessionFactory
    context: RoutingContext
    plan: RoutingPlan
    # Only a re-run can leave decisions of tenants that are no longer candidates.
    rerun: bool
    # The selection's candidate count (None before any selection), and whether it was
    # complete (not ``limit``-ed): only then does a live run retire what it no longer selects.
    record_count: int | None
    selection_complete: bool
    phases: dict[str, float]
    events: TenantEventLog | None
    log: logging.Logger | None


def route_partition(
    session_factory: SessionFactory,
    *,
    snapshot: SnapshotView,
    partition_key: str,
    run_id: str,
    sales_emails: frozenset[str],
    forced_ids: frozenset[str],
    batch_size: int,
    events: TenantEventLog | None = None,
    log: logging.Logger | None = None,
    incremental: bool = True,
) -> PartitionRouting:
    """Route one partition: the forced Sales-owned ids first (straight to Sales-owned P0, no
    enrichment), then every other candidate; a live run then retires the bucket rows it no
    longer selects (not after a ``limit``-ed selection). Decisions of tenants that left the
    partition are removed. Returns totals, the decision summary and the check figures.

    ``incremental``: a live partition copies, in one statement, the decision of every tenant
    whose inputs and keys did not change since the partition routed before it, and decides
    only the others (docs/pipeline.md, "Incremental routing")."""
    run = start_routing(
        session_factory,
        snapshot=snapshot,
        partition_key=partition_key,
        run_id=run_id,
        sales_emails=sales_emails,
        forced_ids=forced_ids,
        incremental=incremental,
        events=events,
        log=log,
    )
    carried, undecided = carry_decisions_forward(run)
    totals, forced = decide_partition(run, undecided, batch_size=batch_size)
    retired = retire_unselected(run)
    routing = finish_routing(run, totals=totals, forced=forced, retired=retired, carried=carried)
    _log_completed(routing, run)
    return routing


def start_routing(
    session_factory: SessionFactory,
    *,
    snapshot: SnapshotView,
    partition_key: str,
    run_id: str,
    sales_emails: frozenset[str],
    forced_ids: frozenset[str],
    incremental: bool,
    events: TenantEventLog | None,
    log: logging.Logger | None,
) -> RoutingRun:
    """The ``plan`` phase: whether the partition is live, its selection, the routing plan;
    and the partition's routing state forgotten until this run ends."""
    phases: dict[str, float] = {}
    with phase(phases, "plan"), session_factory() as session:
        store = TenantStore(session)
        routing_context = load_context(
            session,
            snapshot=snapshot,
            partition_key=partition_key,
            run_id=run_id,
            sales_emails=sales_emails,
            forced_ids=forced_ids,
        )
        selection = store.candidates.selection(session, partition_key=partition_key)
        plan = plan_routing(session, routing_context, incremental=incremental)
        rerun = store.decisions.has_partition(session, partition_key=partition_key)
        # Until this run ends, no later partition may start from this one's decisions.
        store.routing_states.forget(session, partition_key=partition_key)
    if log is not None and not routing_context.live:
        log.info(
            f"{partition_key}: a newer partition owns the live buckets; recording this "
            "partition's decisions only"
        )
    return RoutingRun(
        session_factory,
        routing_context,
        plan,
        rerun=rerun,
        record_count=selection.candidates if selection is not None else None,
        selection_complete=selection is not None and selection.tenant_limit is None,
        phases=phases,
        events=events,
        log=log,
    )


def carry_decisions_forward(run: RoutingRun) -> tuple[int, dict[bool, list[str] | None]]:
    """With an incremental plan, the ``carry_forward`` and ``find_changed`` phases: copy the
    unchanged tenants' decisions from the base partition, then list the candidates still to
    decide, by ``forced``. Returns the decisions copied and those lists (None: decide every
    candidate)."""
    undecided: dict[bool, list[str] | None] = {True: None, False: None}
    plan, context, log = run.plan, run.context, run.log
    if not plan.incremental:
        if log is not None:
            log.info(f"{context.partition_key}: routing every tenant ({plan.reason})")
        return 0, undecided
    assert plan.base is not None and plan.changed_keys is not None
    with (
        phase(run.phases, "carry_forward"),
        run.session_factory() as session,
        run.session_factory() as source,
    ):
        carried = TenantStore(session).decisions.carry_forward(
            session,
            source=source,
            partition_key=context.partition_key,
            run_id=context.run_id,
            base_partition=plan.base.partition_key,
            changed_keys=plan.changed_keys,
            evidence={
                "snapshot_status": context.snapshot.status,
                "hubspot_sync_id": context.snapshot.sync_id,
                "hubspot_snapshot_synced_at": context.snapshot.synced_at,
            },
        )
    with phase(run.phases, "find_changed"), run.session_factory() as session:
        undecided.update(
            TenantStore(session).decisions.undecided_candidates(
                session, partition_key=context.partition_key, run_id=context.run_id
            )
        )
    if log is not None:
        keys = sum(len(k) for k in plan.changed_keys.values())
        log.info(
            f"{context.partition_key}: carried {carried:,} unchanged decisions from "
            f"{plan.base.partition_key} ({keys:,} rule keys changed); deciding "
            f"{sum(len(ids or ()) for ids in undecided.values()):,} tenants"
        )
    return carried, undecided


def decide_partition(
    run: RoutingRun, undecided: dict[bool, list[str] | None], *, batch_size: int
) -> tuple[RoutingTotals, int]:
    """The ``decide`` phase: route the candidates still to decide in batches, the forced ids
    first (straight to Sales-owned P0, without enrichment: docs/pipeline.md). Returns the
    totals and how many forced tenants were routed."""
    totals = RoutingTotals()
    forced_tenants = 0
    for forced in (True, False):
        with phase(run.phases, "decide"):
            routed = route_batches(
                candidate_chunks(
                    run.session_factory,
                    run.context.partition_key,
                    forced=forced,
                    size=batch_size,
                    tenant_ids=undecided[forced],
                ),
                run.session_factory,
                run.context,
                forced=forced,
                events=run.events,
                log=run.log,
                offset=totals.tenants,
                record_count=run.record_count,
            )
        if forced:
            forced_tenants = routed.tenants
        totals.add(routed)
    return totals, forced_tenants


def retire_unselected(run: RoutingRun) -> int:
    """The ``retire`` phase of a live run after a complete selection: retire the bucket rows
    the partition no longer selects, forget their routing inputs and record a retirement
    decision for each. Returns the rows retired."""
    context = run.context
    if not (context.live and run.selection_complete):
        return 0
    partition_key, run_id = context.partition_key, context.run_id
    with phase(run.phases, "retire"), run.session_factory() as session:
        store = TenantStore(session)
        frame = store.buckets.retire_unselected(session, partition_key=partition_key, run_id=run_id)
        store.routing_inputs.forget(session, frame["tenant_id"].tolist())
        if len(frame):
            store.decisions.record(
                session,
                unrouted_decisions(
                    frame, context, rule=RETIRED_RULE, bucket=frame["tenant_bucket"]
                ),
                partition_key=partition_key,
                run_id=run_id,
            )
    retired = len(frame)
    if run.log is not None and retired:
        run.log.info(f"{partition_key}: retired {retired:,} tenants no longer selected")
    return retired


def finish_routing(
    run: RoutingRun, *, totals: RoutingTotals, forced: int, retired: int, carried: int
) -> PartitionRouting:
    """The ``remove_orphans``, ``summarise``, ``check`` and ``record_inputs`` phases, in one
    transaction: the partition's decisions of tenants that left it removed, its summary and
    check figures, and its rules' inputs recorded for the partition routed next."""
    context, phases = run.context, run.phases
    partition_key = context.partition_key
    with run.session_factory() as session:
        store = TenantStore(session)
        with phase(phases, "remove_orphans"):
            orphans = store.decisions.delete_orphans(
                session, partition_key=partition_key, rerun=run.rerun
            )
        with phase(phases, "summarise"):
            summary = store.decisions.summary(session, partition_key=partition_key)
        with phase(phases, "check"):
            violations = store.decisions.check_figures(
                session,
                partition_key=partition_key,
                forced_ids=context.forced_ids,
                live=context.live,
            )
            missing = store.candidates.missing_ids(
                session, partition_key=partition_key, tenant_ids=context.forced_ids
            )
        with phase(phases, "record_inputs"):
            store.routing_states.record(
                session,
                partition_key=partition_key,
                run_id=context.run_id,
                live=context.live,
                inputs=run.plan.inputs,
                now=datetime.now(UTC),
            )
    return PartitionRouting(
        partition_key=partition_key,
        live=context.live,
        totals=totals,
        forced=forced,
        retired=retired,
        orphans_removed=orphans,
        summary=summary,
        check_violations=violations,
        missing_forced_ids=missing,
        carried=carried,
        plan=run.plan.reason,
        phases=phases,
    )


def _log_completed(routing: PartitionRouting, run: RoutingRun) -> None:
    totals, summary, context = routing.totals, routing.summary, run.context
    log_event(
        "routing_completed",
        run_id=context.run_id,
        partition_key=routing.partition_key,
        live=context.live,
        sync_id=context.snapshot.sync_id,
        snapshot_status=context.snapshot.status,
        tenants=totals.tenants + routing.carried,
        decided=totals.tenants,
        carried_forward=routing.carried,
        plan=routing.plan,
        seconds_by_phase=routing.phases,
        by_source_type=summary["by_source_type"],
        by_bucket=summary["by_bucket"],
        by_rule=summary["by_rule"],
        retired=routing.retired,
        moved=totals.moved,
        rejected=totals.rejected,
        elapsed_seconds=round(totals.seconds, 3),
    )


__all__ = [
    "ENRICHMENT_COLUMNS",
    "ROUTED_COLUMNS",
    "PartitionRouting",
    "RoutingContext",
    "RoutingPlan",
    "RoutingRun",
    "RoutingTotals",
    "SnapshotView",
    "load_context",
    "load_snapshot",
    "plan_routing",
    "route_batches",
    "route_frame",
    "route_partition",
    "write_batch",
]
