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
from morpheus_pipelines.tenants.rules.scoring_model import SCORED_PRIORITIES, ScoringModel
from morpheus_pipelines.tenants.steps.tenant_events import TenantEventLog
from morpheus_pipelines.tenants.store import (
    RoutingDecisionRepository,
    TenantCandidateRepository,
    TenantScoreSnapshotRepository,
)
from morpheus_pipelines.tenants.store.tenant_score_snapshot import RecencyShift, RecencyWindow

# A scored tenant's event line: the rule's output without the bulky per-signal detail.
SCORED_EVENT_COLUMNS = [
    c for c in OUTPUT_COLUMNS if c not in ("contributions", "score_model_version")
]

_scores = TenantScoreSnapshotRepository()
_decisions = RoutingDecisionRepository()
_candidates = TenantCandidateRepository()


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


def scoring_scope(session: Session, partition_key: str) -> ScoringScope:
    """Only the newest routed partition writes scores into the live bucket rows; an older one
    records its score snapshots only (docs/partitions.md)."""
    selection = _candidates.selection(session, partition_key=partition_key)
    return ScoringScope(
        live=_decisions.superseding_partition(session, partition_key=partition_key) is None,
        observed_at=selection.selected_at if selection is not None else None,
    )


def recency_shift(model: ScoringModel, partition_key: str) -> RecencyShift:
    """The model's recency points at the partition's scoring time, for the carry's
    statement (docs/scoring.md, "Incremental scoring")."""
    return RecencyShift(
        as_of=as_of(partition_key),
        full_credit_days=model.recency_full_credit_days,
        zero_credit_days=model.recency_zero_credit_days,
        weight=model.weights["recency"],
        thresholds=model.thresholds,
        lowest=SCORED_PRIORITIES[-1],
    )


def _add(counts: dict[str, int], series: pd.Series) -> None:
    for key, n in series.value_counts().items():
        counts[str(key)] = counts.get(str(key), 0) + int(n)


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
    totals = ScoringTotals()
    fingerprint = model.fingerprint
    phases = totals.phases
    with phase(phases, "plan"), session_factory() as session:
        scope = scoring_scope(session, partition_key)
        # Only a re-run can leave snapshots of tenants that are no longer scoring input.
        rerun = _scores.has_partition(session, partition_key=partition_key)
        base = (
            _scores.newest_partition_before(session, partition_key=partition_key)
            if incremental
            else None
        )
    totals.live = scope.live
    tenant_ids = None
    if base is not None:
        shift = recency_shift(model, partition_key) if shift_recency else None
        with session_factory() as session, session_factory() as source:
            with phase(phases, "carry_forward"):
                totals.carried = _scores.carry_forward(
                    session,
                    source=source,
                    partition_key=partition_key,
                    run_id=run_id,
                    base_partition=base,
                    model_fingerprint=fingerprint,
                    recency=RecencyWindow(
                        earlier=as_of(base),
                        later=as_of(partition_key),
                        full_credit_days=model.recency_full_credit_days,
                        zero_credit_days=model.recency_zero_credit_days,
                        future_tolerance_days=model.recency_future_tolerance_days,
                    ),
                    live=scope.live,
                    shift=shift,
                )
            if shift is not None and scope.live:
                # Same transaction: a shifted score is never committed without its bucket row.
                with phase(phases, "update_buckets"):
                    totals.rows_written.update(
                        _scores.update_buckets_from_run(
                            session, partition_key=partition_key, run_id=run_id
                        )
                    )
        with phase(phases, "find_changed"), session_factory() as session:
            tenant_ids = _scores.unscored_inputs(
                session, partition_key=partition_key, run_id=run_id
            )
        totals.carried_from = base
        if log is not None:
            log.info(
                f"{partition_key}: carried {totals.carried:,} scores from {base} (recency "
                f"moved where it moved); "
                f"scoring {len(tenant_ids):,} tenants"
            )

    def read(
        session: Session, after: str | None, limit: int, page: list[str] | None = None
    ) -> pd.DataFrame:
        return _scores.read_scoring_input(
            session,
            partition_key=partition_key,
            after=after,
            limit=limit,
            model_fingerprint=fingerprint,
            tenant_ids=page,
        )

    def write(scores: pd.DataFrame) -> tuple[dict[str, int], float]:
        """The rows written, and the seconds it took (the writer thread's ``write`` phase,
        added to ``phases`` on the caller's thread)."""
        started = time.perf_counter()
        with session_factory() as session:
            rows = _scores.write_scores(
                session, scores, partition_key=partition_key, run_id=run_id, live=scope.live
            )
        return rows, time.perf_counter() - started

    def written(
        chunk: pd.DataFrame, scores: pd.DataFrame, rejected: pd.DataFrame
    ) -> Callable[[tuple[dict[str, int], float]], None]:
        def account(result: tuple[dict[str, int], float]) -> None:
            rows, seconds = result
            phases["write"] = round(phases.get("write", 0.0) + seconds, 3)
            for key, n in rows.items():
                totals.rows_written[key] = totals.rows_written.get(key, 0) + n
            totals.scored += len(scores)
            totals.rejected += len(rejected)
            _add(totals.rejection_reasons, rejected[REJECTION_REASON_COLUMN])
            if events is not None:
                scored = scores[SCORED_EVENT_COLUMNS].assign(
                    sync_id=chunk.loc[scores.index, "hubspot_sync_id"]
                )
                events.tenants_scored(scored, rejected, run_id=run_id, partition_key=partition_key)
            if log is not None:
                log.info(
                    f"scored {totals.scored:,} tenants ({totals.rejected} rejected) "
                    f"for {partition_key}"
                )

        return account

    chunks = iter_pages(session_factory, read, size=batch_size, ids=tenant_ids)
    started_rows = 0
    # Each chunk is written (its own transaction) while the next one is read and scored.
    with write_behind(write) as writer:
        for chunk in _timed(chunks, phases, "read"):
            writer.raise_if_failed()
            if events is not None:
                events.tenants_scoring_started(
                    chunk, run_id=run_id, partition_key=partition_key, offset=started_rows
                )
            started_rows += len(chunk)
            with phase(phases, "score"):
                valid, rejected = partition_scoring_input(chunk)
                scores = score_valid_rows(
                    valid, model=model, as_of=as_of(partition_key), observed_at=scope.observed_at
                )
                scores["input_fingerprint"] = chunk.loc[scores.index, "input_fingerprint"]
            writer.submit(scores, then=written(chunk, scores, rejected))
    with phase(phases, "bookkeeping"), session_factory() as session:
        totals.rows_written["orphan_snapshots"] = _scores.delete_orphans(
            session, partition_key=partition_key, rerun=rerun
        )
        # Scored and carried alike: the partition's snapshots as they stand.
        totals.by_bucket_priority = _scores.bucket_priorities(session, partition_key=partition_key)
    totals.seconds = time.perf_counter() - started
    return totals


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
