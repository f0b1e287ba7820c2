"""Domain Intelligence client: company facts for a tenant (the contract in docs/pipeline.md).

Contract::

    POST {base_url}/v1/enrich/batch   {"inputs": [{"tenant_id", "name", "email_domain"}]}  (<= 100)
      -> 200 {"results": [{"tenant_id", "official_website", "company_name", "industry",
                           "employee_count", "country"}]}      (each field may be null)

Every request has (connect, read) timeouts and goes through a client-side rate budget of
``requests_per_10s``. 429, 5xx, connection errors (including resets and bodies cut short), read
timeouts and unparseable JSON bodies are retried at most ``retry_count`` times, waiting for
``Retry-After`` when present, else for an exponential back-off with full jitter. A
``Retry-After`` longer than ``max_backoff`` is not waited for: the batch fails at once, because
routing must never wait on enrichment (docs/reliability.md). Every other status fails at
once with :class:`DomainIntelligenceError`, as does a 200 whose body is JSON of the wrong shape
(a service bug that retrying will not cure).

Results are validated entry by entry: an entry that is not an object, has no string
``tenant_id``, names a tenant that was not asked about, or repeats one already seen is ignored
and counted (:attr:`BatchResponse.ignored`, :attr:`DomainIntelligenceClient.ignored_results`).
Field values of the wrong type become ``None``; ``employee_count`` is coerced from integral
numbers and digit strings (``"45"``, ``"1,200"``) and anything else becomes ``None``.

The client is safe to share between threads: each request borrows an HTTP session of its own
from a small pool, and the rate budget and counters are locked. No message it produces contains
the optional bearer token or any request payload.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests

from morpheus_pipelines.platform.clients.http import (
    TRANSIENT_TRANSPORT_ERRORS,
    RateBudget,
    RequestStats,
    backoff_seconds,
    error_summary,
    pause_before_retry,
    retry_after_seconds,
)
from morpheus_pipelines.platform.observability.redaction import register_secret

__all__ = [
    "ENRICHMENT_FIELDS",
    "ENRICH_BATCH_PATH",
    "MAX_BATCH_INPUTS",
    "BatchResponse",
    "DomainIntelligenceClient",
    "DomainIntelligenceError",
    "coerce_employee_count",
]

ENRICH_BATCH_PATH = "/v1/enrich/batch"
MAX_BATCH_INPUTS = 100
ENRICHMENT_FIELDS = ("official_website", "company_name", "industry", "employee_count", "country")
_TEXT_FIELDS = ("official_website", "company_name", "industry", "country")
# The warehouse column is a 32-bit integer; a larger head count is a data error, not a company.
_MAX_EMPLOYEE_COUNT = 2**31 - 1
# Plain digits, optionally "1,200"-style thousands groups or a ".0" tail. ASCII only: Python's
# int() would also accept other scripts' digits and underscores, which a service never means.
_EMPLOYEE_COUNT_TEXT = re.compile(r"\+?(?:\d{1,3}(?:,\d{3})+|\d{1,12})(?:\.0*)?", re.ASCII)
# Long enough for any real URL or company name; bounds what a misbehaving service can make us
# store.
_MAX_TEXT_LENGTH = 2048


class DomainIntelligenceError(RuntimeError):
    """A Domain Intelligence call failed for good; the message is safe to log.

    ``attempts`` is how many HTTP attempts were made (all of them failed); ``status`` the last
    HTTP status seen, if any.
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


@dataclass(frozen=True)
class BatchResponse:
    """One successful ``enrich/batch`` call.

    ``results`` holds one validated dict per tenant the service answered for (``tenant_id``
    plus the five :data:`ENRICHMENT_FIELDS`), in the service's order. ``attempts`` counts HTTP
    attempts including the successful one, so ``attempts - 1`` failed and were retried.
    ``ignored`` counts result entries dropped by validation.
    """

    results: list[dict[str, Any]]
    attempts: int
    ignored: int
    seconds: float


def coerce_employee_count(value: object) -> int | None:
    """An employee count as a non-negative int, or ``None`` when it is not one.

    Accepts ints, integral floats and digit strings (``"45"``, ``" 1,200 "``, ``"45.0"``);
    rejects booleans, negatives, fractions, NaN/inf, other text and values beyond 2^31 - 1.
    Never raises.
    """
    if value is None or isinstance(value, bool):
        return None
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            number = int(value)
    elif isinstance(value, str):
        text = value.strip()
        if len(text) <= 24 and _EMPLOYEE_COUNT_TEXT.fullmatch(text):
            number = int(text.lstrip("+").split(".", 1)[0].replace(",", ""))
    if number is None or number < 0 or number > _MAX_EMPLOYEE_COUNT:
        return None
    return number


def _clean_text(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text[:_MAX_TEXT_LENGTH] if text else None


def _error_summary(response: requests.Response) -> str:
    """Status plus the service's ``error`` code and a short ``message``; never the payload."""
    return error_summary(response, ("error", "message"), limit=200)


def _retry_after_seconds(response: requests.Response | None) -> float | None:
    return None if response is None else retry_after_seconds(response.headers.get("Retry-After"))


class DomainIntelligenceClient:
    """A small, strict client of ``POST /v1/enrich/batch`` (see module doc)."""

    def __init__(
        self,
        base_url: str,
        *,
        read_timeout: float = 10.0,
        connect_timeout: float = 3.0,
        retry_count: int = 3,
        requests_per_10s: int = 100,
        sleep: Callable[[float], None] = time.sleep,
        max_backoff: float = 30.0,
        token: str = "",
        logger: logging.Logger | None = None,
    ) -> None:
        base = (base_url or "").strip().rstrip("/")
        parts = urlsplit(base)
        # A misconfigured URL is a deployment error: say so now, not as N failed batches later.
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                "Domain Intelligence base_url must be an absolute http(s) URL, "
                f"got {base_url!r:.120}"
            )
        if retry_count < 0:
            raise ValueError(f"retry_count must be >= 0, got {retry_count}")
        self.base_url = base
        self.timeout = (connect_timeout, read_timeout)
        self.retry_count = retry_count
        self.max_backoff = max_backoff
        self.stats = RequestStats()
        self.ignored_results = 0
        self.budget = RateBudget(requests_per_10s, sleep=sleep)
        self._sleep = sleep
        self._token = token
        self._log = logger or logging.getLogger(__name__)
        self._stats_lock = threading.Lock()
        # requests.Session is not documented as thread-safe, so each request borrows an idle
        # session and returns it. The pool grows only to the peak concurrency and is reused by
        # later calls, instead of leaving one open session behind per (short-lived) thread.
        self._idle_sessions: list[requests.Session] = []
        self._all_sessions: list[requests.Session] = []
        self._sessions_lock = threading.Lock()
        register_secret(token)

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close every HTTP session this client opened."""
        with self._sessions_lock:
            sessions, self._all_sessions, self._idle_sessions = self._all_sessions, [], []
        for session in sessions:
            session.close()

    def __enter__(self) -> DomainIntelligenceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _borrow_session(self) -> requests.Session:
        with self._sessions_lock:
            if self._idle_sessions:
                return self._idle_sessions.pop()
        session = requests.Session()
        session.headers["Accept"] = "application/json"
        if self._token:
            session.headers["Authorization"] = f"Bearer {self._token}"
        with self._sessions_lock:
            self._all_sessions.append(session)
        return session

    def _return_session(self, session: requests.Session) -> None:
        with self._sessions_lock:
            if session in self._all_sessions:  # not closed meanwhile
                self._idle_sessions.append(session)

    def _send(self, url: str, payload: dict[str, Any]) -> requests.Response:
        session = self._borrow_session()
        try:
            return session.post(url, json=payload, timeout=self.timeout)
        finally:
            self._return_session(session)

    def _count(
        self, status: int | str, *, retried: bool = False, rate_limited: bool = False
    ) -> None:
        with self._stats_lock:
            self.stats.count(status)
            self.stats.retries += int(retried)
            self.stats.rate_limited += int(rate_limited)

    # -- endpoint -----------------------------------------------------------------------------

    def enrich_batch(self, inputs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Enrich ≤ 100 tenants; returns the validated results (see :meth:`enrich_batch_detailed`).

        Raises :class:`DomainIntelligenceError` when the batch failed for good and
        ``ValueError`` for more than 100 inputs.
        """
        return self.enrich_batch_detailed(inputs).results

    def enrich_batch_detailed(self, inputs: Sequence[Mapping[str, Any]]) -> BatchResponse:
        """``POST /v1/enrich/batch`` with bounded retries; the results plus attempt counts.

        Each input is sent as ``{"tenant_id", "name", "email_domain"}`` (other keys dropped).
        """
        if len(inputs) > MAX_BATCH_INPUTS:
            raise ValueError(
                f"enrich/batch takes at most {MAX_BATCH_INPUTS} inputs, got {len(inputs)}"
            )
        payload = {
            "inputs": [
                {
                    "tenant_id": item.get("tenant_id"),
                    "name": item.get("name"),
                    "email_domain": item.get("email_domain"),
                }
                for item in inputs
            ]
        }
        asked = {t for t in (i["tenant_id"] for i in payload["inputs"]) if isinstance(t, str)}
        started = time.monotonic()
        attempts, body = self._post(payload)
        results, ignored = self._validate(body, asked, attempts)
        if ignored:
            with self._stats_lock:
                self.ignored_results += ignored
        return BatchResponse(
            results=results,
            attempts=attempts,
            ignored=ignored,
            seconds=time.monotonic() - started,
        )

    # -- transport ----------------------------------------------------------------------------

    def _post(self, payload: dict[str, Any]) -> tuple[int, Any]:
        """Send one logical request; returns (attempts, parsed JSON body of the 200)."""
        url = f"{self.base_url}{ENRICH_BATCH_PATH}"
        last_problem = ""
        last_status: int | None = None
        attempt = 0
        for attempt in range(1, self.retry_count + 2):
            self.budget.acquire()
            response: requests.Response | None = None
            retried = attempt > 1
            try:
                response = self._send(url, payload)
            except TRANSIENT_TRANSPORT_ERRORS as exc:
                self._count(type(exc).__name__, retried=retried)
                last_problem = type(exc).__name__
            else:
                status = last_status = response.status_code
                self._count(status, retried=retried, rate_limited=status == 429)
                if status == 200:
                    try:
                        return attempt, response.json()
                    except ValueError:
                        last_problem = "HTTP 200 with an unparseable JSON body"
                elif status == 429 or status >= 500:
                    last_problem = _error_summary(response)
                else:
                    raise DomainIntelligenceError(
                        f"Domain Intelligence enrich/batch failed: {_error_summary(response)}",
                        status=status,
                        attempts=attempt,
                    )
            if attempt > self.retry_count:
                break
            retry_after = _retry_after_seconds(response)
            if retry_after is not None and retry_after > self.max_backoff:
                raise DomainIntelligenceError(
                    f"Domain Intelligence enrich/batch: {last_problem}; the service asked to "
                    f"wait {retry_after:.0f}s (more than {self.max_backoff:.0f}s), not retried",
                    status=last_status,
                    attempts=attempt,
                )
            wait = (
                retry_after
                if retry_after is not None
                else backoff_seconds(attempt - 1, cap=self.max_backoff)
            )
            pause_before_retry(
                self.budget,
                self._sleep,
                wait=wait,
                rate_limited=response is not None and response.status_code == 429,
                event="domain_intelligence_retry",
                attempt=attempt,
                problem=last_problem,
            )
        raise DomainIntelligenceError(
            f"Domain Intelligence enrich/batch failed after {attempt} attempts: {last_problem}",
            status=last_status,
            attempts=attempt,
        )

    def _validate(
        self, body: Any, asked: set[str], attempts: int
    ) -> tuple[list[dict[str, Any]], int]:
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise DomainIntelligenceError(
                "Domain Intelligence enrich/batch answered 200 without a 'results' list",
                status=200,
                attempts=attempts,
            )
        cleaned: list[dict[str, Any]] = []
        seen: set[str] = set()
        ignored = 0
        for entry in results:
            tenant_id = entry.get("tenant_id") if isinstance(entry, dict) else None
            if not isinstance(tenant_id, str) or tenant_id not in asked or tenant_id in seen:
                ignored += 1
                continue
            seen.add(tenant_id)
            record: dict[str, Any] = {"tenant_id": tenant_id}
            for name in _TEXT_FIELDS:
                record[name] = _clean_text(entry.get(name))
            record["employee_count"] = coerce_employee_count(entry.get("employee_count"))
            cleaned.append(record)
        if ignored:
            self._log.warning(
                f"Domain Intelligence: ignored {ignored} malformed or unexpected result entries"
            )
        return cleaned, ignored
