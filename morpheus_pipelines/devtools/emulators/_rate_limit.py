"""A rolling-window request budget, like HubSpot's ten-second limit."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

__all__ = ["RollingWindowLimiter"]


class RollingWindowLimiter:
    """At most ``max_requests`` admitted per rolling ``interval_s``, like HubSpot's 10 s limit.

    Rejected requests do not consume budget, so a client that backs off recovers.
    """

    def __init__(
        self,
        max_requests: int,
        interval_s: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_requests < 1 or interval_s <= 0:
            raise ValueError("max_requests >= 1 and interval_s > 0 required")
        self.max_requests = max_requests
        self.interval_s = interval_s
        self._clock = clock
        self._stamps: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> tuple[bool, int, float]:
        """Try to admit one request: ``(admitted, remaining, seconds_until_a_slot_frees)``."""
        with self._lock:
            now = self._clock()
            while self._stamps and self._stamps[0] <= now - self.interval_s:
                self._stamps.popleft()
            if len(self._stamps) >= self.max_requests:
                return False, 0, self._stamps[0] + self.interval_s - now
            self._stamps.append(now)
            return True, self.max_requests - len(self._stamps), 0.0
