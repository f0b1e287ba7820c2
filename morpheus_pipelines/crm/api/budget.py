"""Token buckets: the request budget per API key (``MORPHEUS_INTAKE_REQUESTS_PER_MINUTE``),
so one noisy form integration cannot starve the others, and the budget of failed
authentications per client address (``MORPHEUS_INTAKE_AUTH_FAILURES_PER_MINUTE``), so
guessing keys is slow and costs the service nothing (docs/leads.md, docs/security.md)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

MAX_BUCKETS = 10_000


class RequestBudget:
    """A token bucket per key: ``per_minute`` tokens, refilled continuously. At most
    :data:`MAX_BUCKETS` keys are remembered: past that, the buckets that have refilled (which
    answer as a new key would) are forgotten, and if that is not enough all of them, so many
    keys cannot grow it without end."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError(f"the request budget must be at least 1 a minute, got {per_minute}")
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
