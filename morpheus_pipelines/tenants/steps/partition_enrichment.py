"""Enriching a run's partitions (docs/pipeline.md, "Enrichment reuse"): each partition's
routable candidates a chunk at a time, an earlier answer reused while it holds, the rows
written while the next chunk is asked about.

Asking the service is :func:`~morpheus_pipelines.tenants.steps.enrichment.enrich_candidates`;
which answers may be reused is :mod:`morpheus_pipelines.tenants.rules.enrichment`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pandas as pd

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.domain_intelligence import DomainIntelligenceClient
from morpheus_pipelines.platform.heap import frozen_heap
from morpheus_pipelines.platform.store.write_behind import write_behind
from morpheus_pipelines.tenants.rules.enrichment import (
    ENRICHMENT_STATUSES,
    answered_times,
    answers_by_key,
    fingerprint_prefix,
    input_fingerprints,
    reuse_cutoff,
)
from morpheus_pipelines.tenants.steps.enrichment import enrich_candidates
from morpheus_pipelines.tenants.steps.tenant_selection import candidate_chunks
from morpheus_pipelines.tenants.store.store import TenantStore

DEFAULT_MAX_AGE_DAYS = 30  # DOMAIN_INTELLIGENCE_MAX_AGE_DAYS


@dataclass(frozen=True)
class _AnsweredChunk:
    """A chunk's enrichment rows, ready to write, and what producing them took."""

    frame: pd.DataFrame
    asked: int
    reused: int
    requests: int
    failed_batches: int


@dataclass
class PartitionEnrichment:
    """What enriching one run's partitions did, for metadata."""

    tenants: int = 0
    requests: int = 0
    failed_batches: int = 0
    rows_written: int = 0
    status_counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(ENRICHMENT_STATUSES, 0)
    )
    asked: int = 0  # tenants sent to the service
    reused: int = 0  # tenants whose earlier answer still held

    def _count(self, statuses: Iterable[tuple[str, int]]) -> None:
        for status, n in statuses:
            self.status_counts[status] = self.status_counts.get(status, 0) + int(n)

    def add_carried(self, carried: int, written: int, status_counts: Mapping[str, int]) -> None:
        """Answers carried from the partition before, in one statement (``written`` of them
        changed the partition's answer)."""
        self.tenants += carried
        self.reused += carried
        self.rows_written += written
        self._count(status_counts.items())

    def add_chunk(self, chunk: _AnsweredChunk, rows: int, *, configured: bool) -> None:
        """A chunk once written (``rows`` written)."""
        self.rows_written += rows
        self.tenants += chunk.asked + chunk.reused
        self.asked += chunk.asked if configured else 0
        self.reused += chunk.reused
        self.requests += chunk.requests
        self.failed_batches += chunk.failed_batches
        self._count(chunk.frame["enrichment_status"].value_counts().items())


def _reusable(
    session_factory: SessionFactory,
    routable: pd.DataFrame,
    fingerprints: list[str],
    answered_after: datetime,
) -> dict[str, dict[str, Any]]:
    """The earlier answers that still hold for these candidates (the same inputs, younger
    than the maximum age), by normalised tenant id."""
    wanted = list(zip(routable["tenant_id"].tolist(), fingerprints, strict=True))
    with session_factory() as session:
        answers = TenantStore(session).enriched.reusable_answers(
            session, wanted, answered_after=answered_after
        )
    return answers_by_key(routable["tenant_id"], answers)


def _answer_chunk(
    session_factory: SessionFactory,
    client: DomainIntelligenceClient | None,
    chunk: pd.DataFrame,
    *,
    answered_after: datetime | None,
    now: datetime,
    log: logging.Logger | None,
    run_id: str,
) -> _AnsweredChunk:
    """Enrich a chunk's routable candidates, reusing an answer given after ``answered_after``
    for the same inputs (None: reuse nothing); each row carries its input fingerprint and
    when the service answered."""
    routable = chunk.loc[chunk["rejection_reason"].isna(), ["tenant_id", "name", "email"]]
    fingerprints = input_fingerprints(routable)
    earlier = (
        _reusable(session_factory, routable, fingerprints, answered_after)
        if answered_after is not None and len(routable)
        else {}
    )
    result = enrich_candidates(routable, client, log=log, run_id=run_id, earlier_answers=earlier)
    frame = result.frame.copy()
    frame["input_fingerprint"] = fingerprints
    frame["enriched_at"] = pd.Series(
        answered_times(routable["tenant_id"], frame["enrichment_status"], earlier, now=now),
        index=frame.index,
        dtype=object,
    )
    return _AnsweredChunk(
        frame=frame,
        asked=len(routable) - len(earlier),
        reused=len(earlier),
        requests=result.requests,
        failed_batches=result.failed_batches,
    )


# The collections its per-request allocations set off would walk the whole process
# (platform/heap.py).
@frozen_heap()
def enrich_partitions(
    session_factory: SessionFactory,
    client: DomainIntelligenceClient | None,
    *,
    partition_keys: Sequence[str],
    run_id: str,
    chunk_size: int,
    max_age_days: int = DEFAULT_MAX_AGE_DAYS,
    now: datetime | None = None,
    log: logging.Logger | None = None,
    incremental: bool = True,
) -> PartitionEnrichment:
    """Enrich every routable candidate of ``partition_keys`` (the forced ids are not) whose
    answer may have changed, a chunk at a time, one transaction per chunk (written while the
    next chunk is asked about); remove the answers of tenants that left a partition.
    ``client`` None means the service is not configured: every tenant is recorded
    ``unavailable``.

    An answer (``enriched`` or ``not_found``) given less than ``max_age_days`` ago for the
    same inputs is reused instead of asking again (``0``: ask for every tenant, every run);
    when a service is configured. An ``unavailable`` tenant is always asked again.

    ``incremental``: only the tenants whose candidate or answer changed since the day
    carried from, or whose answer no longer holds, are looked at (the others' answers are
    already the day's); off, every tenant is (the tests compare the two)."""
    now = now or datetime.now(UTC)
    totals = PartitionEnrichment()
    answered_after = reuse_cutoff(now, max_age_days, configured=client is not None)
    for partition_key in partition_keys:
        written_before = totals.rows_written
        tenant_ids, kept = _carry_forward(
            session_factory,
            totals,
            partition_key,
            run_id,
            answered_after,
            log,
            incremental=incremental,
        )
        chunks = candidate_chunks(
            session_factory, partition_key, forced=False, size=chunk_size, tenant_ids=tenant_ids
        )
        _answer_chunks(
            session_factory,
            client,
            chunks,
            totals,
            partition_key=partition_key,
            run_id=run_id,
            answered_after=answered_after,
            now=now,
            log=log,
        )
        # Every chunk is written: only now does the day answer what was written for it
        # (until then it answers nothing, docs/pipeline.md, "Enrichment reuse").
        with session_factory() as session:
            TenantStore(session).enriched.finish_day(
                session,
                partition_key=partition_key,
                # Every tenant asked about: the whole day written.
                changed=None if tenant_ids is None else totals.rows_written - written_before,
                answers=kept + len(tenant_ids or ()),
            )
    return totals


def _carry_forward(
    session_factory: SessionFactory,
    totals: PartitionEnrichment,
    partition_key: str,
    run_id: str,
    answered_after: datetime | None,
    log: logging.Logger | None,
    *,
    incremental: bool,
) -> tuple[list[str] | None, int]:
    """In one transaction: find the tenants whose answer may have changed since the
    partition before (docs/pipeline.md, "Enrichment reuse"), carry the answers of those
    asked about with the same name and email, and remove the answers of tenants that are no
    longer enrichable candidates. Returns the tenants still to enrich, or None (every one)
    when there is nothing to carry from, and the answers the day keeps (unchanged or
    carried)."""
    with session_factory() as session:
        enriched = TenantStore(session).enriched
        enriched.start_day(session, partition_key=partition_key)
        base = (
            None
            if answered_after is None
            else enriched.base_day(session, partition_key=partition_key)
        )
        if base is None:
            totals.rows_written += enriched.remove_orphans(
                session, partition_key=partition_key, among_suspects=False
            )
            return None, 0
        carried = enriched.carry_forward(
            session,
            partition_key=partition_key,
            run_id=run_id,
            base_partition=base,
            answered_after=answered_after,
            fingerprint_prefix=fingerprint_prefix(),
            every_tenant=not incremental,
        )
        unchanged = sum(carried.unchanged.values())
        totals.add_carried(unchanged, 0, carried.unchanged)
        totals.add_carried(carried.carried, carried.written, carried.statuses)
        tenant_ids = enriched.unanswered_candidates(session)
        totals.rows_written += enriched.remove_orphans(
            session, partition_key=partition_key, among_suspects=True
        )
    if log is not None:
        log.info(
            f"enrichment: {partition_key}: {unchanged:,} answers unchanged "
            f"since {base}, {carried.carried:,} carried ({carried.written:,} of them "
            f"written); {len(tenant_ids):,} tenants left"
        )
    return tenant_ids, unchanged + carried.carried


def _answer_chunks(
    session_factory: SessionFactory,
    client: DomainIntelligenceClient | None,
    chunks: Iterable[pd.DataFrame],
    totals: PartitionEnrichment,
    *,
    partition_key: str,
    run_id: str,
    answered_after: datetime | None,
    now: datetime,
    log: logging.Logger | None,
) -> None:
    """Each chunk is written (its own transaction) while the next one is asked about."""

    def write(frame: pd.DataFrame) -> int:
        with session_factory() as session:
            return TenantStore(session).enriched.write_chunk(
                session, frame, partition_key=partition_key, run_id=run_id
            )

    with write_behind(write) as writer:
        for chunk in chunks:
            writer.raise_if_failed()  # before asking the service about more tenants
            answered = _answer_chunk(
                session_factory,
                client,
                chunk,
                answered_after=answered_after,
                now=now,
                log=log,
                run_id=run_id,
            )
            then = partial(totals.add_chunk, answered, configured=client is not None)
            writer.submit(answered.frame, then=then)
