"""Talking to HubSpot: the session, the rate budget, bounded retries and forward paging, which
every endpoint module of the client shares.

Every request has (connect, read) timeouts and goes through a client-side rate budget of
``requests_per_10s``. 429, 5xx, connection errors, read timeouts, bodies cut short and
unparseable bodies are retried at most ``retry_count`` times, waiting for ``Retry-After`` when
present, else for the ``X-HubSpot-RateLimit-Interval-Milliseconds`` window when the remaining
budget is 0, else an exponential back-off with jitter. 400/401/403/404 fail at once, and so
does any other status below 500 but 429 (a 409 CONFLICT, say: ``HubSpotError.status`` tells
the caller). A DAILY rate-limit 429 is not retried inside a run: HubSpot resets that budget at
midnight. Writes are retried like reads, so every write the client makes is one HubSpot can
apply twice without effect (upserts by a unique key, associations, membership changes) or
refuses the second time as existing (a list, a property), which the caller takes as done: a
write applied but its answer lost is simply sent again.

No message this client produces contains the token: it is sent only in the Authorization
header and errors quote HubSpot's ``status``, ``category`` and ``message`` fields.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any, Self

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

NOT_RETRIED = frozenset({400, 401, 403, 404})
# The client's logger is the package's, whichever module of it logs.
LOGGER_NAME = __name__.rpartition(".")[0]


class HubSpotError(RuntimeError):
    """A HubSpot call failed for good; the message is safe to log (no token)."""

    def __init__(self, message: str, *, status: int | None = None, endpoint: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint


def _error_summary(response: requests.Response) -> str:
    return error_summary(response, ("category", "policyName", "message"))


def _is_daily_limit(response: requests.Response) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and str(body.get("policyName", "")).upper() == "DAILY"


def results_of(body: Any, problem: str, *, endpoint: str) -> list[Any]:
    """The ``results`` list of an answer; ``problem`` is the error's message without one."""
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise HubSpotError(problem, endpoint=endpoint)
    return body["results"]


class HubSpotTransport:
    """The client's connection to HubSpot: one ``requests`` session with the token, the rate
    budget, the statistics and :meth:`request`, which the endpoint classes call."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        read_timeout: float = 30.0,
        connect_timeout: float = 5.0,
        retry_count: int = 3,
        requests_per_10s: int = 100,
        logger: logging.Logger | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        max_backoff: float = 30.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = (connect_timeout, read_timeout)
        self.retry_count = retry_count
        self.max_backoff = max_backoff
        self.stats = RequestStats()
        self.budget = RateBudget(requests_per_10s, clock=clock, sleep=sleep)
        self._sleep = sleep
        self._log = logger or logging.getLogger(LOGGER_NAME)
        self._session = requests.Session()
        self._session.headers["Accept"] = "application/json"
        if token:
            self._session.headers["Authorization"] = f"Bearer {token}"
        register_secret(token)

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait_before_retry(self, response: requests.Response | None, attempt: int) -> float:
        if response is not None:
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            if retry_after is not None:
                return min(retry_after, self.max_backoff * 4)
            remaining = response.headers.get("X-HubSpot-RateLimit-Remaining")
            interval = response.headers.get("X-HubSpot-RateLimit-Interval-Milliseconds")
            if remaining is not None and interval and remaining.strip() == "0":
                try:
                    return min(int(interval) / 1000.0, self.max_backoff * 4)
                except ValueError:
                    pass
        return backoff_seconds(attempt, cap=self.max_backoff)

    def request(self, method: str, path: str, *, endpoint: str, **kwargs: Any) -> tuple[int, Any]:
        """Send one logical request with bounded retries; returns (status, parsed JSON)."""
        url = f"{self.base_url}{path}"
        last_problem = ""
        for attempt in range(self.retry_count + 1):
            if attempt:
                self.stats.retries += 1
            self.budget.acquire()
            response: requests.Response | None = None
            try:
                response = self._session.request(method, url, timeout=self.timeout, **kwargs)
            except TRANSIENT_TRANSPORT_ERRORS as exc:
                self.stats.count(type(exc).__name__)
                last_problem = f"{type(exc).__name__}"
            else:
                answer = self._answer(response, endpoint)
                if not isinstance(answer, str):
                    return answer
                last_problem = answer
            if attempt == self.retry_count:
                break
            pause_before_retry(
                self.budget,
                self._sleep,
                wait=self._wait_before_retry(response, attempt),
                rate_limited=response is not None and response.status_code == 429,
                event="hubspot_retry",
                endpoint=endpoint,
                attempt=attempt + 1,
                problem=last_problem,
            )
        raise HubSpotError(
            f"HubSpot {endpoint} failed after {self.retry_count + 1} attempts: {last_problem}",
            endpoint=endpoint,
        )

    def _answer(self, response: requests.Response, endpoint: str) -> tuple[int, Any] | str:
        """(status, parsed JSON) of a 2xx answer, or what is wrong with an answer worth
        retrying; an answer no retry can mend raises HubSpotError."""
        status = response.status_code
        self.stats.count(status)
        if status in NOT_RETRIED:
            raise HubSpotError(
                f"HubSpot {endpoint} failed: {_error_summary(response)}",
                status=status,
                endpoint=endpoint,
            )
        if status == 429:
            self.stats.rate_limited += 1
            if _is_daily_limit(response):
                raise HubSpotError(
                    f"HubSpot {endpoint}: daily rate limit reached "
                    f"({_error_summary(response)}); not retried before it resets",
                    status=status,
                    endpoint=endpoint,
                )
        if status == 429 or status >= 500:
            return _error_summary(response)
        if status == 204:  # No Content: a DELETE that succeeded
            return status, None
        if 200 <= status < 300:
            try:
                return status, response.json()
            except ValueError:
                return f"HTTP {status} with an unparseable JSON body"
        raise HubSpotError(
            f"HubSpot {endpoint} failed: {_error_summary(response)}",
            status=status,
            endpoint=endpoint,
        )

    def _iter_pages(
        self, path: str, *, endpoint: str, params: dict[str, Any]
    ) -> Iterator[list[dict[str, Any]]]:
        """Every page of a ``GET`` that pages forward with ``after``; a page without
        ``results`` or a cursor that does not advance is an error, not an endless loop."""
        after: str | None = None
        page = 0
        while True:
            query = dict(params) | ({"after": after} if after else {})
            _, body = self.request("GET", path, endpoint=endpoint, params=query)
            if not isinstance(body, dict) or not isinstance(body.get("results"), list):
                raise HubSpotError(
                    f"{endpoint} page {page + 1} has no 'results' list", endpoint=endpoint
                )
            page += 1
            yield body["results"]
            next_after = ((body.get("paging") or {}).get("next") or {}).get("after")
            if not next_after:
                return
            if next_after == after:
                raise HubSpotError(
                    f"{endpoint} paging did not advance after page {page}", endpoint=endpoint
                )
            after = str(next_after)
