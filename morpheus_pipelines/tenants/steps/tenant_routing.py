"""Routing a partition's tenants into the two buckets (docs/pipeline.md).

A partition is routed in named phases (:func:`route_partition`): plan, carry unchanged
decisions forward, decide the rest batch by batch (:mod:`.routing_batches`), retire what is no
longer selected, finish. The snapshot status decides whether HubSpot matching is used
(``unavailable`` falls through to the Sales-owned rule).

Only the newest routed partition writes the live bucket tables; an older partition (a
backfill, a late re-run) rewrites its own decision record and nothing else, and a live run
retires the bucket rows it no longer selects (docs/partitions.md, "What a backfill changes").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.heap import frozen_heap
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.phases import phase
from morpheus_pipelines.tenants.rules.routing import HUBSPOT_SNAPSHOT_USABLE_STATUSES
from morpheus_pipelines.tenants.rules.routing_inputs import rule_inputs
from morpheus_pipelines.tenants.rules.routing_plan import RoutingPlan, base_needed, routing_plan
from morpheus_pipelines.tenants.steps.routing_batches import (
    RoutingContext,
    RoutingTotals,
    SnapshotView,
    load_context,
    route_batches,
    unrouted_decisions,
)
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog
from morpheus_pipelines.tenants.steps.tenant_selection import candidate_chunks
from morpheus_pipelines.tenants.store.routing_decision import (
    RETIRED_RULE,
)
from morpheus_pipelines.tenants.store.store import TenantStore


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
    # The decisions of the day the carry changed (the base day's moves, copied as no move).
    carry_changed: int = 0


# The collections deciding and recording the rules' inputs set off would walk the whole
# process (platform/heap.py).
@frozen_heap()
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
        # Until this run ends, no later partition may start from this one's decisions, and
        # the day answers none.
        store.routing_states.forget(session, partition_key=partition_key)
        store.decisions.begin_day(
            session,
            partition_key=partition_key,
            run_id=run_id,
            evidence={
                "snapshot_status": routing_context.snapshot.status,
                "hubspot_sync_id": routing_context.snapshot.sync_id,
                "hubspot_snapshot_synced_at": routing_context.snapshot.synced_at,
            },
        )
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
    with run.session_factory() as session:
        store = TenantStore(session)
        with phase(run.phases, "carry_forward"):
            carried, run.carry_changed = store.decisions.carry_forward(
                session,
                partition_key=context.partition_key,
                run_id=context.run_id,
                base_partition=plan.base.partition_key,
                changed_keys=plan.changed_keys,
                # A new newest day still holds the base day's decision of every tenant.
                fresh=not run.rerun and context.live,
            )
        with phase(run.phases, "find_changed"):
            undecided.update(
                store.decisions.undecided_candidates(session, partition_key=context.partition_key)
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
            # A new day starts from the day before, whose tenants that left are not its own;
            # the first day routed, on its first run, holds only what this run wrote.
            removed = 0
            if run.rerun or not store.decisions.only_day(session, partition_key=partition_key):
                removed = store.decisions.remove_orphans(session, partition_key=partition_key)
            orphans = removed if run.rerun else 0
            # Every decision written or removed by the run, at most: a day routed in full
            # wrote them all.
            changed = totals.tenants + retired + removed + run.carry_changed
            store.decisions.finish_day(
                session,
                partition_key=partition_key,
                changed=changed if run.plan.incremental else None,
                decisions=totals.tenants + carried,
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
    "PartitionRouting",
    "RoutingContext",
    "RoutingPlan",
    "RoutingRun",
    "RoutingTotals",
    "SnapshotView",
    "load_context",
    "plan_routing",
    "route_batches",
    "route_partition",
]
