"""A request budget per API key (``MORPHEUS_INTAKE_REQUESTS_PER_MINUTE``): one noisy form
integration cannot starve the others (docs/leads.md)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable


class RequestBudget:
    """A token bucket per key: ``per_minute`` tokens, refilled continuously."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError(f"the request budget must be at least 1 a minute, got {per_minute}")
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when the request may go ahead, else the seconds until it could."""
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate


def retry_after_header(wait_seconds: float) -> str:
    return str(max(1, math.ceil(wait_seconds)))
