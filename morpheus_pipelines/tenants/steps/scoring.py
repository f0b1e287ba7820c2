"""Scoring a partition's routed tenants (docs/scoring.md).

Both buckets are scored with the same model; the final priority is P0 only for tenants that
routing marked with the override P0 / ``hubspot_target_account``. The routing → scoring
message (bucket, override, reason) is checked against the allowlists first: a violating row
is rejected and counted, never scored.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

import pandas as pd
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.observability.phases import phase
from morpheus_pipelines.platform.partitions import day_bounds
from morpheus_pipelines.platform.store.keyset import iter_pages
from morpheus_pipelines.platform.store.write_behind import write_behind
from morpheus_pipelines.tenants.rules.scoring import (
    OUTPUT_COLUMNS,
    REJECTION_REASON_COLUMN,
    partition_scoring_input,
    score_valid_rows,
)
from morpheus_pipelines.tenants.rules.scoring_model import (
    ScoringModel,
    model_document,
    refuse_reused_version,
)
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog
from morpheus_pipelines.tenants.store.scoring_sql import RecencyShift, RecencyWindow
from morpheus_pipelines.tenants.store.store import TenantStore

# A scored tenant's event line: the rule's output without the bulky per-signal detail.
SCORED_EVENT_COLUMNS = [
    c for c in OUTPUT_COLUMNS if c not in ("contributions", "score_model_version")
]


@dataclass
class ScoringTotals:
    scored: int = 0
    rejected: int = 0
    rejection_reasons: dict[str, int] = field(default_factory=dict)
    by_bucket_priority: dict[str, int] = field(default_factory=dict)
    rows_written: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    live: bool = True
    # Scores copied unchanged from the partition scored before (docs/scoring.md,
    # "Incremental scoring"), and the partition they came from.
    carried: int = 0
    carried_from: str | None = None
    # Wall time per phase of the run (observability.phases).
    phases: dict[str, float] = field(default_factory=dict)


def as_of(partition_key: str) -> datetime:
    """Scores are computed as of the end of the partition's CST day."""
    return day_bounds(partition_key)[1] - timedelta(microseconds=1)


@dataclass(frozen=True)
class ScoringScope:
    """Whether the partition owns the live bucket rows, and when its candidates were read."""

    live: bool
    observed_at: datetime | None


class RoutingUnfinished(RuntimeError):
    """Routing began the partition and has not finished it: its decisions answer nothing, and
    scoring them would remove the partition's scores."""


def scoring_scope(session: Session, partition_key: str) -> ScoringScope:
    """Only the newest routed partition writes scores into the live bucket rows; an older one
    records its score snapshots only (docs/partitions.md). Refuses a partition whose routing
    began and has not finished (``RoutingUnfinished``)."""
    store = TenantStore(session)
    if store.decisions.finished(session, partition_key=partition_key) is False:
        raise RoutingUnfinished(
            f"{partition_key}: routing began this partition and has not finished it; "
            "materialize routed_tenants for it, then score it"
        )
    selection = store.candidates.selection(session, partition_key=partition_key)
    return ScoringScope(
        live=store.decisions.superseding_partition(session, partition_key=partition_key) is None,
        observed_at=selection.selected_at if selection is not None else None,
    )


def recency_shift(model: ScoringModel, partition_key: str) -> RecencyShift:
    """The model's recency points at the partition's scoring time, for the carry's
    statement (docs/scoring.md, "Incremental scoring")."""
    return RecencyShift.for_model(model, as_of=as_of(partition_key))


def _add(counts: dict[str, int], series: pd.Series) -> None:
    for key, n in series.value_counts().items():
        counts[str(key)] = counts.get(str(key), 0) + int(n)


@dataclass
class ScoringRun:
    """One partition's scoring as its phases pass it on: what the plan phase read, the
    totals the phases add to, and where they report."""

    session_factory: SessionFactory
    partition_key: str
    run_id: str
    model: ScoringModel
    scope: ScoringScope
    # Only a re-run can leave snapshots of tenants that are no longer scoring input.
    rerun: bool
    # The partition scored before, whose unchanged scores are copied (None: score everyone).
    base: str | None
    totals: ScoringTotals
    events: TenantEventLog | None
    log: logging.Logger | None

    @property
    def phases(self) -> dict[str, float]:
        return self.totals.phases


def score_partition(
    session_factory: SessionFactory,
    *,
    partition_key: str,
    run_id: str,
    model: ScoringModel,
    batch_size: int = 100_000,
    log: logging.Logger | None = None,
    events: TenantEventLog | None = None,
    incremental: bool = True,
    shift_recency: bool = True,
) -> ScoringTotals:
    """Score every routed tenant of the partition, one transaction per chunk.

    ``incremental``: first copy, in one statement, the score of every tenant whose scoring
    input and model are those of the partition scored before and whose recency did not move
    (docs/scoring.md, "Incremental scoring"), and, with ``shift_recency`` and a model whose
    total is never capped, of every such tenant whose recency did move, with its recency
    points moved in the same statement; then score the others. The allowlists apply to every
    tenant scored: a copied score was validated with the same routing message."""
    shift_recency = shift_recency and model.total_never_capped
    started = time.perf_counter()
    run = start_scoring(
        session_factory,
        partition_key=partition_key,
        run_id=run_id,
        model=model,
        incremental=incremental,
        events=events,
        log=log,
    )
    tenant_ids = carry_scores_forward(run, shift_recency=shift_recency)
    score_chunks(run, tenant_ids, batch_size=batch_size)
    finish_scoring(run)
    run.totals.seconds = time.perf_counter() - started
    return run.totals


def start_scoring(
    session_factory: SessionFactory,
    *,
    partition_key: str,
    run_id: str,
    model: ScoringModel,
    incremental: bool,
    events: TenantEventLog | None,
    log: logging.Logger | None,
) -> ScoringRun:
    """The ``plan`` phase: whether the partition is live, whether this is a re-run, and
    (``incremental``) the partition scored before it."""
    totals = ScoringTotals()
    with phase(totals.phases, "plan"), session_factory() as session:
        store = TenantStore(session)
        scope = scoring_scope(session, partition_key)
        # Committed with the plan, before any score: every score of the version is written
        # after its record.
        record_model(store, model, partition_key=partition_key, run_id=run_id)
        rerun = store.scores.has_partition(session, partition_key=partition_key)
        base = (
            store.scores.newest_partition_before(session, partition_key=partition_key)
            if incremental
            else None
        )
    totals.live = scope.live
    return ScoringRun(
        session_factory,
        partition_key,
        run_id,
        model,
        scope,
        rerun=rerun,
        base=base,
        totals=totals,
        events=events,
        log=log,
    )


def record_model(
    store: TenantStore, model: ScoringModel, *, partition_key: str, run_id: str
) -> None:
    """Record the model's version with its numbers on its first use; refuse a model whose
    version was first used with other numbers (``ModelVersionReused``)."""
    recorded = store.scoring_models.record(
        store.session,
        version=model.version,
        fingerprint=model.fingerprint,
        document=model_document(model),
        partition_key=partition_key,
        run_id=run_id,
    )
    refuse_reused_version(
        model,
        recorded_fingerprint=recorded.fingerprint,
        first_partition_key=recorded.first_partition_key,
        first_run_id=recorded.first_run_id,
    )


def carry_scores_forward(run: ScoringRun, *, shift_recency: bool) -> list[str] | None:
    """With a base partition, the ``carry_forward``, ``update_buckets`` and ``find_changed``
    phases: copy the base's unchanged scores (their recency points moved, with
    ``shift_recency``), update the bucket rows of the shifted ones in the same transaction,
    then list the tenants still to score. None: score every tenant."""
    if run.base is None:
        return None
    base, partition_key, totals = run.base, run.partition_key, run.totals
    shift = recency_shift(run.model, partition_key) if shift_recency else None
    with run.session_factory() as session, run.session_factory() as source:
        store = TenantStore(session)
        with phase(run.phases, "carry_forward"):
            totals.carried = store.scores.carry_forward(
                session,
                source=source,
                partition_key=partition_key,
                run_id=run.run_id,
                base_partition=base,
                model_fingerprint=run.model.fingerprint,
                recency=RecencyWindow.for_model(
                    run.model, earlier=as_of(base), later=as_of(partition_key)
                ),
                live=run.scope.live,
                shift=shift,
            )
        if shift is not None and run.scope.live:
            # Same transaction: a shifted score is never committed without its bucket row.
            with phase(run.phases, "update_buckets"):
                totals.rows_written.update(
                    store.scores.update_buckets_from_run(
                        session, partition_key=partition_key, run_id=run.run_id
                    )
                )
    with phase(run.phases, "find_changed"), run.session_factory() as session:
        tenant_ids = TenantStore(session).scores.unscored_inputs(
            session, partition_key=partition_key, run_id=run.run_id
        )
    totals.carried_from = base
    if run.log is not None:
        run.log.info(
            f"{partition_key}: carried {totals.carried:,} scores from {base} (recency "
            f"moved where it moved); "
            f"scoring {len(tenant_ids):,} tenants"
        )
    return tenant_ids


def score_chunks(run: ScoringRun, tenant_ids: list[str] | None, *, batch_size: int) -> None:
    """The ``read``, ``score`` and ``write`` phases: score the tenants still to score (every
    one when ``tenant_ids`` is None) a chunk at a time, each chunk written (its own
    transaction) while the next one is read and scored."""
    chunks = iter_pages(
        run.session_factory, partial(_read_input, run), size=batch_size, ids=tenant_ids
    )
    scored_as_of = as_of(run.partition_key)
    started_rows = 0
    with write_behind(partial(_write_scores, run)) as writer:
        for chunk in _timed(chunks, run.phases, "read"):
            writer.raise_if_failed()
            if run.events is not None:
                run.events.tenants_scoring_started(
                    chunk, run_id=run.run_id, partition_key=run.partition_key, offset=started_rows
                )
            started_rows += len(chunk)
            with phase(run.phases, "score"):
                valid, rejected = partition_scoring_input(chunk)
                scores = score_valid_rows(
                    valid, model=run.model, as_of=scored_as_of, observed_at=run.scope.observed_at
                )
                scores["input_fingerprint"] = chunk.loc[scores.index, "input_fingerprint"]
            writer.submit(scores, then=_written(run, chunk, scores, rejected))


def _read_input(
    run: ScoringRun, session: Session, after: str | None, limit: int, page: list[str] | None = None
) -> pd.DataFrame:
    return TenantStore(session).scores.read_scoring_input(
        session,
        partition_key=run.partition_key,
        after=after,
        limit=limit,
        model_fingerprint=run.model.fingerprint,
        tenant_ids=page,
    )


def _write_scores(run: ScoringRun, scores: pd.DataFrame) -> tuple[dict[str, int], float]:
    """The rows written, and the seconds it took (the writer thread's ``write`` phase,
    added to ``phases`` on the caller's thread)."""
    started = time.perf_counter()
    with run.session_factory() as session:
        rows = TenantStore(session).scores.write_scores(
            session, scores, partition_key=run.partition_key, run_id=run.run_id, live=run.scope.live
        )
    return rows, time.perf_counter() - started


def _written(
    run: ScoringRun, chunk: pd.DataFrame, scores: pd.DataFrame, rejected: pd.DataFrame
) -> Callable[[tuple[dict[str, int], float]], None]:
    """What to account once a chunk's scores are written: totals, events, progress."""
    totals = run.totals

    def account(result: tuple[dict[str, int], float]) -> None:
        rows, seconds = result
        run.phases["write"] = round(run.phases.get("write", 0.0) + seconds, 3)
        for key, n in rows.items():
            totals.rows_written[key] = totals.rows_written.get(key, 0) + n
        totals.scored += len(scores)
        totals.rejected += len(rejected)
        _add(totals.rejection_reasons, rejected[REJECTION_REASON_COLUMN])
        if run.events is not None:
            scored = scores[SCORED_EVENT_COLUMNS].assign(
                sync_id=chunk.loc[scores.index, "hubspot_sync_id"]
            )
            run.events.tenants_scored(
                scored, rejected, run_id=run.run_id, partition_key=run.partition_key
            )
        if run.log is not None:
            run.log.info(
                f"scored {totals.scored:,} tenants ({totals.rejected} rejected) "
                f"for {run.partition_key}"
            )

    return account


def finish_scoring(run: ScoringRun) -> None:
    """The ``bookkeeping`` phase: the partition's snapshots of tenants that are no longer
    scoring input removed, and its snapshots counted per bucket and priority."""
    with phase(run.phases, "bookkeeping"), run.session_factory() as session:
        store = TenantStore(session)
        run.totals.rows_written["orphan_snapshots"] = store.scores.delete_orphans(
            session, partition_key=run.partition_key, rerun=run.rerun
        )
        # Scored and carried alike: the partition's snapshots as they stand.
        run.totals.by_bucket_priority = store.scores.bucket_priorities(
            session, partition_key=run.partition_key
        )


def _timed(
    chunks: Iterator[pd.DataFrame], phases: dict[str, float], name: str
) -> Iterator[pd.DataFrame]:
    """``chunks``, with the time spent producing each added to ``phases[name]``."""
    iterator = iter(chunks)
    while True:
        with phase(phases, name):
            chunk = next(iterator, None)
        if chunk is None:
            return
        yield chunk
