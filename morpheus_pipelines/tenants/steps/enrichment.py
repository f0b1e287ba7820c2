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
Nothing here touches the warehouse: a run's partitions, with the reuse of stored answers, are
enriched by :mod:`morpheus_pipelines.tenants.steps.partition_enrichment`.

Decisions:

* Only distinct tenant ids are sent, in batches of ``batch_size`` (≤ 100), over a small thread
  pool of ``max_workers``; the client's rate budget bounds the request rate across the pool and
  at most ``2 * max_workers`` batches are in flight, so memory does not grow with the number of
  batches queued.
* What is sent (a corporate email domain only, a cleaned name) and when an earlier answer is
  reused instead of asking again are rules: :mod:`morpheus_pipelines.tenants.rules.enrichment`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from morpheus_pipelines.platform.clients.domain_intelligence import (
    ENRICHMENT_FIELDS,
    MAX_BATCH_INPUTS,
    DomainIntelligenceClient,
    DomainIntelligenceError,
)
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.redaction import redact
from morpheus_pipelines.platform.text.columns import (
    email_domains,
    map_unique_values,
    normalise_identifiers,
    object_array,
)
from morpheus_pipelines.platform.text.email_domain_class import classify_canonical_domain
from morpheus_pipelines.tenants.rules.enrichment import (
    ENRICHED,
    ENRICHMENT_STATUSES,
    NOT_FOUND,
    UNAVAILABLE,
    service_inputs,
)
from morpheus_pipelines.tenants.store.day_tables import ENRICHMENT_RESULT_COLUMNS

__all__ = [
    "ENRICHED",
    "ENRICHMENT_STATUSES",
    "NOT_FOUND",
    "OUTPUT_COLUMNS",
    "UNAVAILABLE",
    "EnrichmentResult",
    "enrich_candidates",
]

INPUT_COLUMNS = ("tenant_id", "name", "email")
OUTPUT_COLUMNS: tuple[str, ...] = ENRICHMENT_RESULT_COLUMNS
_TEXT_RESULT_FIELDS = ("official_website", "company_name", "industry", "country")


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


_UNAVAILABLE = _TenantEnrichment(fields=None, status=UNAVAILABLE, errors=0, ms=0)


@dataclass
class _Plan:
    """What the rules say before any request: every row's email domain and its class, the
    answers already known (by normalised tenant id) and the batches to ask about the rest."""

    keys: list[str | None]
    domains: pd.Series
    classes: pd.Series
    answers: dict[str, _TenantEnrichment]
    inputs: list[dict[str, Any]]
    batches: list[list[dict[str, Any]]]


@dataclass
class _Tally:
    """What asking the service cost, batch by batch."""

    batches: int = 0
    failed_batches: int = 0
    requests: int = 0
    retries: int = 0
    ignored: int = 0

    def add(self, outcome: _BatchOutcome) -> None:
        self.requests += outcome.attempts
        self.retries += outcome.attempts - 1
        self.ignored += outcome.ignored
        if outcome.results is None:
            self.failed_batches += 1


def _run_batch(
    client: DomainIntelligenceClient, number: int, inputs: list[dict[str, Any]]
) -> _BatchOutcome:
    """One batch, never raising: a failure becomes an outcome without results."""
    tenant_ids = [item["tenant_id"] for item in inputs]
    started = time.monotonic()

    def failed(attempts: int, error: str, status: int | None = None) -> _BatchOutcome:
        ms = int((time.monotonic() - started) * 1000)
        return _BatchOutcome(
            number,
            tenant_ids,
            results=None,
            attempts=attempts,
            ignored=0,
            ms=ms,
            error=redact(error)[:500],
            status=status,
        )

    try:
        response = client.enrich_batch_detailed(inputs)
    except DomainIntelligenceError as exc:
        return failed(exc.attempts, str(exc), exc.status)
    except Exception as exc:
        # A bug or an unforeseen failure in one batch must not take routing down with it; it is
        # logged at ERROR level (below) so it is not silently absorbed.
        return failed(1, f"unexpected {type(exc).__name__}: {exc}")
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
    fields and ``enrichment_status``; see :mod:`.partition_enrichment`): that tenant is not
    sent, the answer is used as is, and the email-domain rules are applied to today's email.
    Raises ``ValueError`` only for a wrong call: missing columns, ``batch_size`` outside
    1..100, ``max_workers`` < 1.
    """
    _check_arguments(candidates, batch_size, max_workers)
    log = log or logging.getLogger(__name__)
    started = time.monotonic()
    plan = _plan(candidates, earlier_answers or {}, batch_size)
    tally = _ask_service(
        client,
        plan,
        batch_size=batch_size,
        max_workers=max_workers,
        log=log,
        run_id=run_id,
        progress_every=progress_every,
    )
    frame = _build_frame(candidates, plan)
    return _result(frame, tally, configured=client is not None, started=started, run_id=run_id)


def _plan(
    candidates: pd.DataFrame, earlier_answers: Mapping[str, dict[str, Any]], batch_size: int
) -> _Plan:
    # Rules first: they need no service and are computed once per distinct value.
    domains = email_domains(candidates["email"])
    classes = map_unique_values(domains, classify_canonical_domain)
    # Ids are compared and sent trimmed; the output keeps the caller's values untouched.
    keys = normalise_identifiers(candidates["tenant_id"]).tolist()
    answers = {key: _earlier(answer) for key, answer in earlier_answers.items()}
    inputs = service_inputs(
        keys, candidates["name"].tolist(), domains.tolist(), classes.tolist(), answered=answers
    )
    batches = [inputs[i : i + batch_size] for i in range(0, len(inputs), batch_size)]
    return _Plan(keys, domains, classes, answers, inputs, batches)


def _earlier(answer: Mapping[str, Any]) -> _TenantEnrichment:
    """A stored answer as today's: its service fields, its status and how long it took."""
    return _TenantEnrichment(
        fields={name: answer.get(name) for name in ENRICHMENT_FIELDS},
        status=answer["enrichment_status"],
        errors=0,
        ms=int(answer.get("enrichment_ms") or 0),
    )


def _ask_service(
    client: DomainIntelligenceClient | None,
    plan: _Plan,
    *,
    batch_size: int,
    max_workers: int,
    log: logging.Logger,
    run_id: str | None,
    progress_every: int,
) -> _Tally:
    """Send the plan's batches and put every tenant's outcome into ``plan.answers``."""
    if client is None:
        log.info(
            f"enrichment: Domain Intelligence not configured; {len(plan.inputs):,} tenants "
            "recorded as unavailable"
        )
        return _Tally()
    tally = _Tally(batches=len(plan.batches))
    if not plan.batches:
        return tally
    workers = min(max_workers, len(plan.batches))
    log.info(
        f"enrichment: {len(plan.inputs):,} tenants in {len(plan.batches):,} batches "
        f"of <= {batch_size}, {workers} workers"
    )
    for completed, outcome in enumerate(_run_batches(client, plan.batches, workers), start=1):
        tally.add(outcome)
        if outcome.results is None:
            _log_failed_batch(outcome, run_id, log)
        plan.answers.update(_tenant_outcomes(outcome))
        if completed % max(1, progress_every) == 0 or completed == len(plan.batches):
            log.info(
                f"enrichment: {completed:,}/{len(plan.batches):,} batches done, "
                f"{tally.failed_batches:,} failed, {tally.requests:,} requests"
            )
    return tally


def _result(
    frame: pd.DataFrame, tally: _Tally, *, configured: bool, started: float, run_id: str | None
) -> EnrichmentResult:
    counts = frame["enrichment_status"].value_counts()
    status_counts = {status: int(counts.get(status, 0)) for status in ENRICHMENT_STATUSES}
    duration = time.monotonic() - started
    log_event(
        "enrichment_completed",
        run_id=run_id,
        configured=configured,
        tenants=len(frame),
        batches=tally.batches,
        failed_batches=tally.failed_batches,
        requests=tally.requests,
        retries=tally.retries,
        ignored_results=tally.ignored,
        status_counts=status_counts,
        duration_seconds=round(duration, 3),
    )
    return EnrichmentResult(
        frame=frame,
        batches=tally.batches,
        failed_batches=tally.failed_batches,
        requests=tally.requests,
        retries=tally.retries,
        duration_seconds=duration,
        status_counts=status_counts,
        ignored_results=tally.ignored,
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


def _text_column(values: list[object]) -> pd.Series:
    # dtype=object keeps None as None (pandas 3 would infer "str" and turn it into NaN),
    # which is what the database layer and the "is None" checks downstream expect.
    return pd.Series(object_array(values), dtype=object)


def _build_frame(candidates: pd.DataFrame, plan: _Plan) -> pd.DataFrame:
    rows = [
        plan.answers.get(key, _UNAVAILABLE) if key is not None else _UNAVAILABLE
        for key in plan.keys
    ]
    # Columns are built positionally and the caller's index is put on at the end, so an index
    # with repeated labels cannot trigger pandas' label alignment.
    data: dict[str, Any] = {
        "tenant_id": candidates["tenant_id"].reset_index(drop=True),
        "email_domain": _text_column(plan.domains.tolist()),
        "email_domain_class": _text_column(plan.classes.tolist()),
    }
    for name in _TEXT_RESULT_FIELDS:
        data[name] = _text_column([r.fields.get(name) if r.fields else None for r in rows])
    data["employee_count"] = pd.Series(
        pd.array([r.fields.get("employee_count") if r.fields else None for r in rows], "Int64")
    )
    data["enrichment_status"] = _text_column([r.status for r in rows])
    data["enrichment_error_count"] = np.fromiter((r.errors for r in rows), np.int64, len(rows))
    data["enrichment_ms"] = np.fromiter((r.ms for r in rows), np.int64, len(rows))
    frame = pd.DataFrame(data)[list(OUTPUT_COLUMNS)]  # the contract's column order
    frame.index = candidates.index
    return frame
