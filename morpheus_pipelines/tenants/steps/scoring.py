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
from morpheus_pipelines.platform.store.set_based import transaction_start
from morpheus_pipelines.platform.store.write_behind import write_behind
from morpheus_pipelines.tenants.rules.scoring import (
    OUTPUT_COLUMNS,
    REJECTION_REASON_COLUMN,
    partition_scoring_input,
    recency_may_move,
    recency_moves_from,
    score_valid_rows,
)
from morpheus_pipelines.tenants.rules.scoring_model import (
    ScoringModel,
    model_document,
    refuse_reused_version,
)
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog
from morpheus_pipelines.tenants.store.store import TenantStore
from morpheus_pipelines.tenants.store.tenant_score_snapshot import INPUT_VERSIONS, LiveScoring

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
    # Tenants whose stored score answers the partition without being scored again
    # (docs/scoring.md, "Incremental scoring"), and the partition scored before it.
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
    # The partition scored before (None: none).
    base: str | None
    # Whether stored scores move their recency points on read: a tenant whose only change is
    # the passing of time is not scored again, and the versions written move theirs.
    moves_on_read: bool
    # When the plan's transaction began (the database's clock, as the bucket rows' stamps).
    started_at: datetime
    # Whether any version was valid on the day when the run began (else it holds only what
    # the run writes).
    held_before: bool
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

    ``incremental`` and ``shift_recency``, with a model whose total is never capped: score
    only the tenants whose stored score cannot answer the day (docs/scoring.md, "Incremental
    scoring"): a version with the tenant's bucket, the model and the numbers of its scoring
    input's versions answers every later day, its recency points moved when the day is read.
    Otherwise score every tenant and store each score as it was computed for the day. The
    allowlists apply to every tenant scored: a stored score was validated with the same
    routing message."""
    started = time.perf_counter()
    run = start_scoring(
        session_factory,
        partition_key=partition_key,
        run_id=run_id,
        model=model,
        moves_on_read=incremental and shift_recency and model.total_never_capped,
        events=events,
        log=log,
    )
    tenant_ids = find_changed(run)
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
    moves_on_read: bool,
    events: TenantEventLog | None,
    log: logging.Logger | None,
) -> ScoringRun:
    """The ``plan`` phase: whether the partition is live, the partition scored before it, the
    model recorded, and the day's scores begun (it answers nothing until they finish)."""
    totals = ScoringTotals()
    with phase(totals.phases, "plan"), session_factory() as session:
        store = TenantStore(session)
        scope = scoring_scope(session, partition_key)
        # Committed with the plan, before any score: every score of the version is written
        # after its record.
        record_model(store, model, partition_key=partition_key, run_id=run_id)
        base = store.scores.newest_partition_before(session, partition_key=partition_key)
        store.scores.start_day(session, partition_key=partition_key)
        started_at = transaction_start(session)
        held_before = store.scores.holds_any(session, partition_key=partition_key)
    totals.live = scope.live
    return ScoringRun(
        session_factory,
        partition_key,
        run_id,
        model,
        scope,
        base=base,
        moves_on_read=moves_on_read,
        started_at=started_at,
        held_before=held_before,
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


def find_changed(run: ScoringRun) -> list[str] | None:
    """The ``find_changed`` phase: the tenants whose stored score cannot answer the partition,
    to score (None: every tenant, when stored scores do not move their recency on read, no
    score was valid on the day when the run began, or none can answer it)."""
    if not (run.moves_on_read and run.held_before):
        return None
    totals = run.totals
    with phase(run.phases, "find_changed"), run.session_factory() as session:
        tenant_ids, inputs = TenantStore(session).scores.changed_inputs(
            session,
            partition_key=run.partition_key,
            model_version=run.model.version,
        )
    scoring = inputs if tenant_ids is None else len(tenant_ids)
    totals.carried = inputs - scoring
    totals.carried_from = run.base
    if run.log is not None:
        run.log.info(
            f"{run.partition_key}: {totals.carried:,} stored scores answer the day "
            f"(their recency moved on read); scoring {scoring:,} tenants"
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
                scores = stored_scores(
                    scores,
                    chunk,
                    partition_key=run.partition_key,
                    model=run.model,
                    moves_on_read=run.moves_on_read,
                )
            writer.submit(
                (scores, rejected["tenant_id"].dropna().tolist()),
                then=_written(run, chunk, scores, rejected),
            )


def _read_input(
    run: ScoringRun, session: Session, after: str | None, limit: int, page: list[str] | None = None
) -> pd.DataFrame:
    return TenantStore(session).scores.read_scoring_input(
        session,
        partition_key=run.partition_key,
        after=after,
        limit=limit,
        tenant_ids=page,
    )


def stored_scores(
    scores: pd.DataFrame,
    chunk: pd.DataFrame,
    *,
    partition_key: str,
    model: ScoringModel,
    moves_on_read: bool,
) -> pd.DataFrame:
    """The scores as their versions store them: with the numbers of each tenant's input's
    versions, its ``last_active_at``, a ``recency_key`` of None where the version moves its
    recency points on read (``moves_on_read``, and activity no later than the day's end: the
    arithmetic the view repeats holds for those) or the day and total otherwise (stored as
    scored), and for the former when their points may start to move
    (``recency_moves_from``)."""
    inputs = chunk.loc[scores.index]
    last_active = pd.to_datetime(inputs["last_active_at"], utc=True, errors="coerce")
    scored_for = as_of(partition_key)
    movable = last_active.isna() | (last_active <= pd.Timestamp(scored_for))
    if not moves_on_read:
        movable[:] = False
    moves_from = recency_moves_from(last_active, model=model, as_of=scored_for)
    # A score stored as scored names its day and total: scored again for the day with
    # another total (the source read again, activity after the day's end judged anew), it
    # is a new version.
    recency_key = pd.Series(None, index=scores.index, dtype=object)
    stored_as_scored = ~movable.to_numpy(dtype=bool)
    if stored_as_scored.any():
        totals = scores.loc[stored_as_scored, "total_score"].map("{:.2f}".format)
        recency_key[stored_as_scored] = partition_key + " " + totals
    return scores.assign(
        # A read gives a column with NULLs as floats: written as integers.
        **{column: inputs[column].astype("Int64") for column in INPUT_VERSIONS},
        last_active_at=last_active,
        recency_key=recency_key,
        recency_moves_from=moves_from.where(movable),
    )


def _write_scores(
    run: ScoringRun, chunk: tuple[pd.DataFrame, list[str]]
) -> tuple[dict[str, int], float]:
    """The rows written, and the seconds it took (the writer thread's ``write`` phase,
    added to ``phases`` on the caller's thread)."""
    scores, rejected_ids = chunk
    started = time.perf_counter()
    with run.session_factory() as session:
        rows = TenantStore(session).scores.write_scores(
            session,
            scores,
            partition_key=run.partition_key,
            run_id=run.run_id,
            live=run.scope.live,
            rejected_ids=rejected_ids,
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
    """In one transaction, the ``finish`` phase (the tenants that are no longer scoring input
    removed from the partition, and its scores made the day's) and, for the live partition,
    ``update_buckets`` (the bucket rows whose score moved with the day brought to it); then
    ``bookkeeping``: the day's scores counted per bucket and priority."""
    totals, partition_key, live = run.totals, run.partition_key, run.scope.live
    with run.session_factory() as session:
        store = TenantStore(session)
        with phase(run.phases, "finish"):
            last_live = store.scores.last_live_scoring(session) if live else None
            totals.rows_written["removed"] = store.scores.finish_day(
                session,
                partition_key=partition_key,
                live_since=run.started_at if live else None,
                live_run_id=run.run_id if live else None,
                wrote=totals.rows_written.get("snapshots", 0)
                + totals.rows_written.get("rejected_removed", 0),
                scores=totals.scored + totals.carried,
                held_before=run.held_before,
            )
        if live:
            with phase(run.phases, "update_buckets"):
                moved = store.scores.update_moved_buckets(
                    session,
                    partition_key=partition_key,
                    started_at=run.started_at,
                    since=_moved_since(run, last_live),
                )
            for key, n in moved.items():
                totals.rows_written[key] = totals.rows_written.get(key, 0) + n
    with phase(run.phases, "bookkeeping"), run.session_factory() as session:
        # Scored and stored alike: the partition's scores as the day answers them.
        totals.by_bucket_priority = TenantStore(session).scores.bucket_priorities(
            session, partition_key=partition_key
        )


def _moved_since(
    run: ScoringRun, last_live: LiveScoring | None
) -> tuple[LiveScoring, tuple[datetime, datetime]] | None:
    """The last live scoring, and the ``last_active_at`` range whose recency may have moved
    between its day and this one (None: no live scoring before)."""
    if last_live is None:
        return None
    earlier, later = sorted((as_of(last_live.partition_key), as_of(run.partition_key)))
    return last_live, recency_may_move(run.model, earlier=earlier, later=later)


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
