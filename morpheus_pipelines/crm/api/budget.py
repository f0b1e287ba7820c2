"""The intake's two request budgets (docs/leads.md, "Request budgets"; docs/security.md):

* **per API key** (``MORPHEUS_INTAKE_REQUESTS_PER_MINUTE``), so one noisy form integration
  cannot starve the others: :class:`SharedBudget`, one row per key in PostgreSQL, so every
  worker process of every host spends the same budget. A keep-alive client whose requests
  all reach one worker gets the whole budget, and two hosts together admit it once, not
  twice. Each request costs one ``INSERT … ON CONFLICT DO UPDATE`` of that row
  (:mod:`~morpheus_pipelines.crm.repositories.request_budgets`), in autocommit on a few
  connections of its own used from the event loop (no worker thread), on an UNLOGGED table
  with ``synchronous_commit=off``: no WAL flush, and the row locked for that one statement,
  never for the request's work. Why here: the
  database is already on every request's path and already shared by every host, where a
  limiter server (Redis) would be one more service to run and reach. Of the limiter
  libraries, ``limits`` has no PostgreSQL store, and ``pyrate-limiter``'s keeps one row per
  request (a sliding log: up to 6,000 rows a key, counted on every request, in a table it
  creates itself outside the migrations, through a pool of its own); the state a generic
  cell rate needs is one timestamp per key (:mod:`~morpheus_pipelines.crm.rules.request_budget`).
  What it costs (docs/decisions/0049, 0055): about a tenth of a millisecond for the
  statement, and no hop to a worker thread.
* **per client address, of failed authentications** (``MORPHEUS_INTAKE_AUTH_FAILURES_PER_MINUTE``),
  so guessing keys is slow and costs the service nothing: :class:`RequestBudget`, a token
  bucket in each process's memory, checked before any key is looked at. It is per process on
  purpose: sharing it would make every unauthenticated request a database write, the one
  thing a flood of them must not get, and a 256-bit secret is out of reach of guessing at
  any multiple of 30 a minute. Each worker therefore admits the full budget of failures.

Both report themselves as an :class:`~morpheus_pipelines.crm.rules.request_budget.Allowance`,
which the guard answers in the ``RateLimit-Policy`` and ``RateLimit`` fields of every
``/v1/`` answer (:func:`rate_limit_headers`).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from morpheus_pipelines.crm.repositories.request_budgets import take_budget
from morpheus_pipelines.crm.rules.request_budget import (
    Allowance,
    BudgetPolicy,
    limit_item,
    policy_item,
)
from morpheus_pipelines.db.autocommit import AutocommitConnections

MAX_BUCKETS = 10_000
KEY_POLICY = "api-key"
AUTH_FAILURE_POLICY = "auth-failures"
ORIGIN_POLICY = "origin"


class SharedBudget:
    """A key's budget in PostgreSQL, shared by every process that uses the same database."""

    def __init__(self, connections: AutocommitConnections, policy: BudgetPolicy) -> None:
        # The connections are the budgets' own: commits that do not wait for a flush.
        self._connections = connections
        self.policy = policy

    async def take(self, key: str) -> Allowance:
        """Count one request of ``key``; the allowance says whether it was admitted."""
        admitted, ahead = await take_budget(self._connections, f"key:{key}", self.policy)
        return self.policy.allowance(ahead, admitted=admitted)


class RequestBudget:
    """A token bucket per key in this process's memory: ``per_minute`` tokens, refilled
    continuously. At most :data:`MAX_BUCKETS` keys are remembered: past that, the buckets
    that have refilled (which answer as a new key would) are forgotten, and if that is not
    enough all of them, so many keys cannot grow it without end."""

    def __init__(
        self,
        per_minute: int,
        *,
        name: str = AUTH_FAILURE_POLICY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_minute < 1:
            raise ValueError(f"the request budget must be at least 1 a minute, got {per_minute}")
        self.policy = BudgetPolicy(name, per_minute)
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def _tokens(self, key: str, now: float) -> float:
        tokens, last = self._buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - last) * self.rate)

    def wait(self, key: str) -> float:
        """The seconds until ``key`` has a token (0 when it has one), taking nothing."""
        with self._lock:
            tokens = self._tokens(key, self._clock())
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def take(self, key: str) -> float:
        """0 when the request may go ahead, else the seconds until it could."""
        now = self._clock()
        with self._lock:
            tokens = self._tokens(key, now)
            if key not in self._buckets and len(self._buckets) >= MAX_BUCKETS:
                self._forget_full(now)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def allowance(self, key: str, *, admitted: bool = True) -> Allowance:
        """The bucket of ``key`` as it stands, in the terms of the ``RateLimit`` field."""
        with self._lock:
            tokens = self._tokens(key, self._clock())
        # Tokens short of whole are the theoretical arrival time's lead on now.
        ahead = (self.capacity - tokens) / self.rate
        return self.policy.allowance(ahead, admitted=admitted)

    def _forget_full(self, now: float) -> None:
        self._buckets = {
            key: (tokens, last)
            for key, (tokens, last) in self._buckets.items()
            if tokens + (now - last) * self.rate < self.capacity
        }
        if len(self._buckets) >= MAX_BUCKETS:  # that many drained keys: start afresh
            self._buckets.clear()


def retry_after_header(wait_seconds: float) -> str:
    return str(max(1, math.ceil(wait_seconds)))


# -- what an answer says about the budgets ------------------------------------------------------

_ALLOWANCES = "rate_limit_allowances"


def note_allowance(scope: dict[str, Any], allowance: Allowance) -> None:
    """Remember, for the answer's ``RateLimit`` field, what a budget said of this request."""
    scope.setdefault("state", {}).setdefault(_ALLOWANCES, []).append(allowance)


def noted_allowances(scope: dict[str, Any]) -> list[Allowance]:
    return scope.get("state", {}).get(_ALLOWANCES, [])


def rate_limit_headers(
    policies: Iterable[BudgetPolicy], allowances: Iterable[Allowance]
) -> list[tuple[bytes, bytes]]:
    """``RateLimit-Policy`` (every policy of the service, the same on every answer) and
    ``RateLimit`` (the state of each budget this request was counted against), as
    draft-ietf-httpapi-ratelimit-headers writes them."""
    headers = [(b"ratelimit-policy", ", ".join(map(policy_item, policies)).encode())]
    items = ", ".join(map(limit_item, allowances))
    if items:
        headers.append((b"ratelimit", items.encode()))
    return headers
