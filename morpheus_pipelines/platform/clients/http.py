"""What the HTTP clients share: a sliding-window rate budget, back-off and request stats."""

from __future__ import annotations

import math
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import requests

from morpheus_pipelines.platform.observability.events import log_event

# The server counts a request when it arrives, the client when it sends; a window a little
# longer than the server's absorbs that skew, so a client at full budget is not answered 429
# (each 429 costs a whole rate-limit interval of waiting).
WINDOW_MARGIN = 1.03

# Transport failures worth another attempt: no answer, no answer in time, or an answer cut
# short (a body shorter than its Content-Length surfaces as ChunkedEncodingError while it is
# read; a garbled compressed body as ContentDecodingError).
TRANSIENT_TRANSPORT_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


class RateBudget:
    """At most ``limit`` requests in any ``window`` seconds (client-side, before HubSpot's)."""

    def __init__(
        self,
        limit: int,
        window: float = 10.0 * WINDOW_MARGIN,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if limit < 1:
            raise ValueError(f"rate budget must allow at least 1 request, got {limit}")
        self.limit, self.window = limit, window
        self._clock, self._sleep = clock, sleep
        self._sent: deque[float] = deque()
        self._lock = threading.Lock()
        self.waited_seconds = 0.0

    def acquire(self) -> None:
        """Block until one more request fits in the window, then record it."""
        while True:
            with self._lock:
                now = self._clock()
                while self._sent and now - self._sent[0] >= self.window:
                    self._sent.popleft()
                if len(self._sent) < self.limit:
                    self._sent.append(now)
                    return
                wait = self.window - (now - self._sent[0])
            self.waited_seconds += wait
            self._sleep(wait)

    def pause(self, seconds: float) -> None:
        """Server asked us to wait: hold every request of this budget for ``seconds``."""
        if seconds > 0:
            self.waited_seconds += seconds
            self._sleep(seconds)


def pause_before_retry(
    budget: RateBudget,
    sleep: Callable[[float], None],
    *,
    wait: float,
    rate_limited: bool,
    event: str,
    **fields: object,
) -> None:
    """Log the retry, then wait: a 429 holds the whole rate budget (every request of this
    client), any other failure only this request."""
    log_event(event, wait_seconds=round(wait, 3), **fields)
    if rate_limited:
        budget.pause(wait)
    else:
        sleep(wait)


def error_summary(response: requests.Response, keys: Sequence[str], *, limit: int = 300) -> str:
    """``HTTP <status>`` plus the named fields of a JSON error body, each cut to ``limit``
    characters. Built only from the response body: never from the request, so a token in a
    header cannot reach a message."""
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code} (non-JSON body)"
    if not isinstance(body, dict):
        return f"HTTP {response.status_code}"
    parts = [f"HTTP {response.status_code}"]
    for key in keys:
        value = body.get(key)
        if isinstance(value, str | int) and value != "":
            parts.append(f"{key}={str(value)[:limit]}")
    return " ".join(parts)


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header as seconds to wait: delta-seconds (``"7"``) or an HTTP-date
    (``"Wed, 03 Dec 2026 21:50:07 GMT"``), never negative; ``None`` when absent or not a
    finite time (``"soon"``, ``"nan"``, ``"inf"``), so the caller backs off its own way."""
    raw = (value or "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def backoff_seconds(attempt: int, *, base: float = 0.5, cap: float = 30.0) -> float:
    """Exponential back-off with full jitter: uniform in [0, min(cap, base·2^attempt)]."""
    return random.uniform(0, min(cap, base * 2**attempt))


@dataclass
class RequestStats:
    """Counts a client exposes for materialisation metadata and logs."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    by_status: dict[str, int] = field(default_factory=dict)

    def count(self, status: int | str) -> None:
        self.requests += 1
        key = str(status)
        self.by_status[key] = self.by_status.get(key, 0) + 1
