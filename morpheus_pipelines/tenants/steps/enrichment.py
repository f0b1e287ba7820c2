"""Enrichment of tenant candidates: email domain, its class, Domain Intelligence (docs/pipeline.md).

``enrich_candidates`` turns a frame of candidates (``tenant_id``, ``name``, ``email``) into one
row of enrichment per candidate, in the same order and with the same index, with exactly the
columns of :data:`OUTPUT_COLUMNS`:

``tenant_id``             as given
``email_domain``          normalised domain of ``email`` (``rules.normalise.email_domain``) or None
``email_domain_class``    ``free`` | ``disposable`` | ``corporate`` | ``missing``
``official_website``, ``company_name``, ``industry``, ``country``
                          text from the service, or None
``employee_count``        nullable ``Int64``; strings such as ``"45"`` are coerced, garbage is NA
``enrichment_status``     ``enriched``   the service returned at least one non-null field;
                          ``not_found``  the service answered with all nulls;
                          ``unavailable`` no service configured, the tenant's batch failed after
                          its retries, or the service's answer left the tenant out
``enrichment_error_count`` failed HTTP attempts of the tenant's batch (retried ones included),
                          plus one when the answer left the tenant out
``enrichment_ms``         wall time of the tenant's batch call, retries included

Routing never waits on enrichment: without a client every tenant is ``unavailable`` at once,
and a batch that fails for good marks only its own tenants ``unavailable`` while the others
continue. Nothing here raises for bad candidate data (any ``email``/``name`` value is accepted).

Decisions:

* Only distinct tenant ids are sent, in batches of ``batch_size`` (≤ 100), over a small thread
  pool of ``max_workers``; the client's rate budget bounds the request rate across the pool and
  at most ``2 * max_workers`` batches are in flight, so memory does not grow with the number of
  batches queued.
* A free or disposable email domain is not sent to the service (``email_domain`` null): it says
  nothing about the tenant's company, and a service that resolved ``gmail.com`` to Google would
  hand routing a false ``official_website`` match (personal domains never match: docs/pipeline.md).
* Names are sent trimmed and cut at 256 characters: a longer "name" is not a company name and
  only inflates the request.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.domain_intelligence import (
    ENRICHMENT_FIELDS,
    MAX_BATCH_INPUTS,
    DomainIntelligenceClient,
    DomainIntelligenceError,
)
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.redaction import redact
from morpheus_pipelines.platform.store.write_behind import write_behind
from morpheus_pipelines.platform.text.email_domain_class import (
    CORPORATE,
    classifier_version,
    classify_canonical_domain,
)
from morpheus_pipelines.platform.text.normalise import (
    email_domains,
    map_unique_values,
    normalise_identifiers,
    object_array,
)
from morpheus_pipelines.tenants.steps.tenant_selection import candidate_chunks
from morpheus_pipelines.tenants.store import EnrichedTenantRepository
from morpheus_pipelines.tenants.store.enriched_tenant import (
    ENRICHMENT_RESULT_COLUMNS,
    REUSABLE_STATUSES,
)

__all__ = [
    "ENRICHED",
    "ENRICHMENT_STATUSES",
    "NOT_FOUND",
    "OUTPUT_COLUMNS",
    "UNAVAILABLE",
    "EnrichmentResult",
    "enrich_candidates",
]

ENRICHED = "enriched"
NOT_FOUND = "not_found"
UNAVAILABLE = "unavailable"
ENRICHMENT_STATUSES: tuple[str, ...] = (ENRICHED, NOT_FOUND, UNAVAILABLE)

INPUT_COLUMNS = ("tenant_id", "name", "email")
OUTPUT_COLUMNS: tuple[str, ...] = ENRICHMENT_RESULT_COLUMNS
_TEXT_RESULT_FIELDS = ("official_website", "company_name", "industry", "country")
_MAX_NAME_LENGTH = 256
DEFAULT_MAX_AGE_DAYS = 30  # DOMAIN_INTELLIGENCE_MAX_AGE_DAYS


@dataclass
class EnrichmentResult:
    """The enriched frame plus what it cost; the numbers feed materialisation metadata."""

    frame: pd.DataFrame
    batches: int
    failed_batches: int
    requests: int
    retries: int
    duration_seconds: float
    status_counts: dict[str, int] = field(default_factory=dict)
    ignored_results: int = 0  # service result entries dropped by validation


@dataclass(frozen=True)
class _BatchOutcome:
    number: int  # 1-based
    tenant_ids: list[str]
    results: dict[str, dict[str, Any]] | None  # None: the batch failed for good
    attempts: int
    ignored: int
    ms: int
    error: str | None = None
    status: int | None = None


@dataclass(frozen=True)
class _TenantEnrichment:
    fields: dict[str, Any] | None
    status: str
    errors: int
    ms: int


_enriched = EnrichedTenantRepository()
_UNAVAILABLE = _TenantEnrichment(fields=None, status=UNAVAILABLE, errors=0, ms=0)


def _clean_name(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text[:_MAX_NAME_LENGTH] if text else None


def _run_batch(
    client: DomainIntelligenceClient, number: int, inputs: list[dict[str, Any]]
) -> _BatchOutcome:
    """One batch, never raising: a failure becomes an outcome without results."""
    tenant_ids = [item["tenant_id"] for item in inputs]
    started = time.monotonic()
    try:
        response = client.enrich_batch_detailed(inputs)
    except DomainIntelligenceError as exc:
        return _BatchOutcome(
            number=number,
            tenant_ids=tenant_ids,
            results=None,
            attempts=exc.attempts,
            ignored=0,
            ms=int((time.monotonic() - started) * 1000),
            error=redact(str(exc))[:500],
            status=exc.status,
        )
    except Exception as exc:
        # A bug or an unforeseen failure in one batch must not take routing down with it; it is
        # logged at ERROR level (below) so it is not silently absorbed.
        return _BatchOutcome(
            number=number,
            tenant_ids=tenant_ids,
            results=None,
            attempts=1,
            ignored=0,
            ms=int((time.monotonic() - started) * 1000),
            error=redact(f"unexpected {type(exc).__name__}: {exc}")[:500],
        )
    return _BatchOutcome(
        number=number,
        tenant_ids=tenant_ids,
        results={record["tenant_id"]: record for record in response.results},
        attempts=response.attempts,
        ignored=response.ignored,
        ms=int((time.monotonic() - started) * 1000),
    )


def _tenant_outcomes(outcome: _BatchOutcome) -> Iterator[tuple[str, _TenantEnrichment]]:
    if outcome.results is None:
        failed = _TenantEnrichment(None, UNAVAILABLE, outcome.attempts, outcome.ms)
        for tenant_id in outcome.tenant_ids:
            yield tenant_id, failed
        return
    retried = outcome.attempts - 1
    for tenant_id in outcome.tenant_ids:
        record = outcome.results.get(tenant_id)
        if record is None:
            # The service answered but left this tenant out: we learned nothing, so it is not
            # "not_found", and the omission counts as one more error.
            yield tenant_id, _TenantEnrichment(None, UNAVAILABLE, retried + 1, outcome.ms)
            continue
        fields = {name: record.get(name) for name in ENRICHMENT_FIELDS}
        found = any(value is not None for value in fields.values())
        yield (
            tenant_id,
            _TenantEnrichment(fields, ENRICHED if found else NOT_FOUND, retried, outcome.ms),
        )


def _check_arguments(candidates: pd.DataFrame, batch_size: int, max_workers: int) -> None:
    missing = [c for c in INPUT_COLUMNS if c not in candidates.columns]
    if missing:
        raise ValueError(f"candidates lack column(s) {missing}; need {list(INPUT_COLUMNS)}")
    if not 1 <= batch_size <= MAX_BATCH_INPUTS:
        raise ValueError(f"batch_size must be within 1..{MAX_BATCH_INPUTS}, got {batch_size}")
    if max_workers < 1:
        raise ValueError(f"max_workers must be >= 1, got {max_workers}")


def enrich_candidates(
    candidates: pd.DataFrame,
    client: DomainIntelligenceClient | None,
    *,
    batch_size: int = MAX_BATCH_INPUTS,
    max_workers: int = 4,
    log: logging.Logger | None = None,
    run_id: str | None = None,
    progress_every: int = 10,
    earlier_answers: Mapping[str, dict[str, Any]] | None = None,
) -> EnrichmentResult:
    """Enrich every candidate (see module doc for the output contract).

    ``client`` None means no Domain Intelligence service is configured. Progress goes to
    ``log`` (e.g. Dagster's ``context.log``) every ``progress_every`` batches and at the end;
    a failed batch also writes an ``enrichment_batch_failed`` event (no emails, no payloads).
    ``earlier_answers`` maps a tenant id to a stored answer that still holds (its service
    fields and ``enrichment_status``; see :func:`enrich_partitions`): that tenant is not sent,
    the answer is used as is, and the email-domain rules are applied to today's email.
    Raises ``ValueError`` only for a wrong call: missing columns, ``batch_size`` outside
    1..100, ``max_workers`` < 1.
    """
    _check_arguments(candidates, batch_size, max_workers)
    log = log or logging.getLogger(__name__)
    started = time.monotonic()

    # Rules first: they need no service and are computed once per distinct value.
    domains = email_domains(candidates["email"])
    classes = map_unique_values(domains, classify_canonical_domain)
    # Ids are compared and sent trimmed; the output keeps the caller's values untouched.
    keys = normalise_identifiers(candidates["tenant_id"]).tolist()

    # One input per distinct tenant id; the first row of a repeated id speaks for it.
    inputs: list[dict[str, Any]] = []
    seen: set[str] = set()
    names = candidates["name"].tolist()
    domain_values = domains.tolist()
    class_values = classes.tolist()
    per_tenant: dict[str, _TenantEnrichment] = {}
    for key, answer in (earlier_answers or {}).items():
        fields = {name: answer.get(name) for name in ENRICHMENT_FIELDS}
        per_tenant[key] = _TenantEnrichment(
            fields=fields,
            status=answer["enrichment_status"],
            errors=0,
            ms=int(answer.get("enrichment_ms") or 0),
        )
    for position, key in enumerate(keys):
        if key is None or key in seen or key in per_tenant:
            continue
        seen.add(key)
        inputs.append(
            {
                "tenant_id": key,
                "name": _clean_name(names[position]),
                "email_domain": (
                    domain_values[position] if class_values[position] == CORPORATE else None
                ),
            }
        )
    batches = [inputs[i : i + batch_size] for i in range(0, len(inputs), batch_size)]

    failed_batches = requests_sent = retries = ignored = 0
    if client is None:
        log.info(
            f"enrichment: Domain Intelligence not configured; {len(inputs):,} tenants "
            "recorded as unavailable"
        )
        batches = []
    elif batches:
        workers = min(max_workers, len(batches))
        log.info(
            f"enrichment: {len(inputs):,} tenants in {len(batches):,} batches "
            f"of <= {batch_size}, {workers} workers"
        )
        for completed, outcome in enumerate(_run_batches(client, batches, workers), start=1):
            requests_sent += outcome.attempts
            retries += outcome.attempts - 1
            ignored += outcome.ignored
            if outcome.results is None:
                failed_batches += 1
                _log_failed_batch(outcome, run_id, log)
            per_tenant.update(_tenant_outcomes(outcome))
            if completed % max(1, progress_every) == 0 or completed == len(batches):
                log.info(
                    f"enrichment: {completed:,}/{len(batches):,} batches done, "
                    f"{failed_batches:,} failed, {requests_sent:,} requests"
                )

    frame = _build_frame(candidates, keys, domains, classes, per_tenant)
    counts = frame["enrichment_status"].value_counts()
    status_counts = {status: int(counts.get(status, 0)) for status in ENRICHMENT_STATUSES}
    duration = time.monotonic() - started
    log_event(
        "enrichment_completed",
        run_id=run_id,
        configured=client is not None,
        tenants=len(frame),
        batches=len(batches),
        failed_batches=failed_batches,
        requests=requests_sent,
        retries=retries,
        ignored_results=ignored,
        status_counts=status_counts,
        duration_seconds=round(duration, 3),
    )
    return EnrichmentResult(
        frame=frame,
        batches=len(batches),
        failed_batches=failed_batches,
        requests=requests_sent,
        retries=retries,
        duration_seconds=duration,
        status_counts=status_counts,
        ignored_results=ignored,
    )


def _run_batches(
    client: DomainIntelligenceClient, batches: list[list[dict[str, Any]]], workers: int
) -> Iterator[_BatchOutcome]:
    """Outcomes in completion order; at most ``2 * workers`` batches submitted at a time."""
    window = 2 * workers
    queue = iter(enumerate(batches, start=1))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="enrichment") as pool:
        pending: set[Future[_BatchOutcome]] = set()
        exhausted = False
        while True:
            while not exhausted and len(pending) < window:
                item = next(queue, None)
                if item is None:
                    exhausted = True
                    break
                pending.add(pool.submit(_run_batch, client, item[0], item[1]))
            if not pending:
                return
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()  # _run_batch never raises


def _log_failed_batch(outcome: _BatchOutcome, run_id: str | None, log: logging.Logger) -> None:
    unexpected = outcome.error is not None and outcome.error.startswith("unexpected ")
    log_event(
        "enrichment_batch_failed",
        level=logging.ERROR if unexpected else logging.WARNING,
        run_id=run_id,
        batch=outcome.number,
        tenants=len(outcome.tenant_ids),
        tenant_ids=outcome.tenant_ids,
        attempts=outcome.attempts,
        http_status=outcome.status,
        error=outcome.error,
        elapsed_ms=outcome.ms,
    )
    log.warning(
        f"enrichment: batch {outcome.number} ({len(outcome.tenant_ids)} tenants) failed after "
        f"{outcome.attempts} attempt(s); its tenants are recorded as unavailable: {outcome.error}"
    )


def _build_frame(
    candidates: pd.DataFrame,
    keys: list[str | None],
    domains: pd.Series,
    classes: pd.Series,
    per_tenant: dict[str, _TenantEnrichment],
) -> pd.DataFrame:
    rows = [per_tenant.get(key, _UNAVAILABLE) if key is not None else _UNAVAILABLE for key in keys]

    # Columns are built positionally and the caller's index is put on at the end, so an index
    # with repeated labels cannot trigger pandas' label alignment.
    def text_column(values: list[object]) -> pd.Series:
        # dtype=object keeps None as None (pandas 3 would infer "str" and turn it into NaN),
        # which is what the database layer and the "is None" checks downstream expect.
        return pd.Series(object_array(values), dtype=object)

    data: dict[str, Any] = {
        "tenant_id": candidates["tenant_id"].reset_index(drop=True),
        "email_domain": text_column(domains.tolist()),
        "email_domain_class": text_column(classes.tolist()),
    }
    for name in _TEXT_RESULT_FIELDS:
        data[name] = text_column([r.fields.get(name) if r.fields else None for r in rows])
    data["employee_count"] = pd.Series(
        pd.array([r.fields.get("employee_count") if r.fields else None for r in rows], "Int64")
    )
    data["enrichment_status"] = text_column([r.status for r in rows])
    data["enrichment_error_count"] = np.fromiter((r.errors for r in rows), np.int64, len(rows))
    data["enrichment_ms"] = np.fromiter((r.ms for r in rows), np.int64, len(rows))
    frame = pd.DataFrame(data)[list(OUTPUT_COLUMNS)]  # the contract's column order
    frame.index = candidates.index
    return frame


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


def fingerprint_prefix() -> str:
    """What every fingerprint starts with: the domain lists' version, so an answer stored
    under other lists (whose email-domain class may differ) is never copied."""
    return f"{classifier_version()}:"


def input_fingerprints(candidates: pd.DataFrame) -> list[str]:
    """A hash of what the service is asked about each candidate (its id, its cleaned name,
    its email domain when corporate), after :func:`fingerprint_prefix`: an answer is reused
    only while this is unchanged."""
    domains = email_domains(candidates["email"])
    classes = map_unique_values(domains, classify_canonical_domain)
    keys = normalise_identifiers(candidates["tenant_id"]).tolist()
    fingerprints = []
    for key, name, domain, domain_class in zip(
        keys, candidates["name"].tolist(), domains.tolist(), classes.tolist(), strict=True
    ):
        asked = "\x1f".join(
            [str(key), _clean_name(name) or "", domain if domain_class == CORPORATE else ""]
        )
        fingerprints.append(hashlib.sha1(asked.encode(), usedforsecurity=False).hexdigest())
    prefix = fingerprint_prefix()
    return [prefix + fingerprint for fingerprint in fingerprints]


def _reusable(
    session_factory: SessionFactory,
    routable: pd.DataFrame,
    fingerprints: list[str],
    answered_after: datetime,
) -> dict[str, dict[str, Any]]:
    """The earlier answers that still hold for these candidates (the same inputs, younger
    than the maximum age), by normalised tenant id."""
    given = routable["tenant_id"].tolist()
    keys = normalise_identifiers(routable["tenant_id"]).tolist()
    with session_factory() as session:
        answers = _enriched.reusable_answers(
            session,
            [
                (tenant, fingerprint)
                for tenant, fingerprint in zip(given, fingerprints, strict=True)
            ],
            answered_after=answered_after,
        )
    return {
        key: answers[tenant]
        for tenant, key in zip(given, keys, strict=True)
        if tenant in answers and key is not None
    }


@dataclass(frozen=True)
class _AnsweredChunk:
    """A chunk's enrichment rows, ready to write, and what producing them took."""

    frame: pd.DataFrame
    asked: int
    reused: int
    requests: int
    failed_batches: int


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
    # When the service answered: now for today's answers, the original time for a reused one
    # (so it ages), none for unavailable.
    answered_at = [
        earlier[tenant]["enriched_at"] if tenant in earlier else now
        for tenant in normalise_identifiers(routable["tenant_id"]).tolist()
    ]
    frame["enriched_at"] = pd.Series(
        [
            at if status in REUSABLE_STATUSES else None
            for at, status in zip(answered_at, frame["enrichment_status"], strict=True)
        ],
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


def _write_answers(
    session_factory: SessionFactory, partition_key: str, run_id: str, frame: pd.DataFrame
) -> int:
    with session_factory() as session:
        return _enriched.upsert_chunk(session, frame, partition_key=partition_key, run_id=run_id)


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
) -> PartitionEnrichment:
    """Enrich every routable candidate of ``partition_keys`` (the forced ids are not), a chunk
    at a time, one transaction per chunk (written while the next chunk is asked about); remove
    enrichment rows of tenants that left a partition. ``client`` None means the service is not
    configured: every tenant is recorded ``unavailable``.

    An answer (``enriched`` or ``not_found``) given less than ``max_age_days`` ago for the
    same inputs is reused instead of asking again (``0``: ask for every tenant, every run);
    when a service is configured. An ``unavailable`` tenant is always asked again."""
    now = now or datetime.now(UTC)
    totals = PartitionEnrichment()
    reuse = max_age_days > 0 and client is not None
    for partition_key in partition_keys:
        tenant_ids = None
        with session_factory() as session:
            # Only a re-run can leave answers of tenants that are no longer candidates.
            rerun = _enriched.has_partition(session, partition_key=partition_key)
        if reuse:
            # The tenants asked about with the same name and email the day before: their
            # answers copied in one statement (docs/pipeline.md, "Enrichment reuse").
            with session_factory() as session, session_factory() as source:
                base = _enriched.newest_partition_before(session, partition_key=partition_key)
                if base is not None:
                    carried = _enriched.carry_forward(
                        session,
                        source=source,
                        partition_key=partition_key,
                        run_id=run_id,
                        base_partition=base,
                        answered_after=now - timedelta(days=max_age_days),
                        fingerprint_prefix=fingerprint_prefix(),
                    )
                    tenant_ids = _enriched.unanswered_candidates(
                        session, partition_key=partition_key, run_id=run_id
                    )
                    totals.tenants += carried
                    totals.reused += carried
                    totals.rows_written += carried
                    for status, n in _enriched.status_counts(
                        session, partition_key=partition_key, run_id=run_id
                    ).items():
                        totals.status_counts[status] = totals.status_counts.get(status, 0) + n
            if log is not None and base is not None:
                log.info(
                    f"enrichment: {partition_key}: copied {carried:,} answers from {base}; "
                    f"{len(tenant_ids or ()):,} tenants left"
                )
        chunks = candidate_chunks(
            session_factory, partition_key, forced=False, size=chunk_size, tenant_ids=tenant_ids
        )

        def written(chunk: _AnsweredChunk) -> Callable[[int], None]:
            def account(rows: int) -> None:
                totals.rows_written += rows
                totals.tenants += chunk.asked + chunk.reused
                totals.asked += chunk.asked if client is not None else 0
                totals.reused += chunk.reused
                totals.requests += chunk.requests
                totals.failed_batches += chunk.failed_batches
                for status, n in chunk.frame["enrichment_status"].value_counts().items():
                    totals.status_counts[status] = totals.status_counts.get(status, 0) + int(n)

            return account

        # Each chunk is written (its own transaction) while the next one is asked about.
        with write_behind(
            partial(_write_answers, session_factory, partition_key, run_id)
        ) as writer:
            for chunk in chunks:
                writer.raise_if_failed()  # before asking the service about more tenants
                answered = _answer_chunk(
                    session_factory,
                    client,
                    chunk,
                    answered_after=now - timedelta(days=max_age_days) if reuse else None,
                    now=now,
                    log=log,
                    run_id=run_id,
                )
                writer.submit(answered.frame, then=written(answered))
        with session_factory() as session:
            totals.rows_written += _enriched.delete_orphans(
                session, partition_key=partition_key, rerun=rerun
            )
    return totals
