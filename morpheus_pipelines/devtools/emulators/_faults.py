"""Fault injection for the loopback emulators: what can go wrong, and which request it hits.

:class:`Fault` describes one fault and its targeting; :class:`FaultRegistry` holds an
emulator's faults and picks, atomically, the one that fires for a request (see
``docs/reliability.md`` for the faults the pipeline is tested against).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["GENERIC_FAULTS", "Fault", "FaultKind", "FaultRegistry"]


class FaultKind(StrEnum):
    """Every fault an emulator can inject; each emulator declares which ones it supports."""

    STATUS = "status"  # an HTTP error status (5xx, 429, ...) with an error body
    RESET = "reset"  # close the socket with a TCP RST and no response at all
    TRUNCATED_JSON = "truncated_json"  # consistent Content-Length, but the JSON is cut in half
    SHORT_BODY = "short_body"  # Content-Length promises more bytes than are sent, then close
    SLOW = "slow"  # the normal response, after ``delay`` seconds
    # HubSpot-only kinds.
    RATE_LIMIT = "rate_limit"  # 429 with one of HubSpot's policy bodies and optional headers
    UNAUTHORIZED = "unauthorized"  # 401 INVALID_AUTHENTICATION whatever the token
    DUPLICATE_MEMBERS = "duplicate_members"  # a membership page repeats a record id
    LIST_SIZE = "list_size"  # the list reports a size that differs from its memberships
    PROCESSING_STATUS = "processing_status"  # the list reports a status other than COMPLETE
    MISSING_COMPANIES = "missing_companies"  # a batch read answers 207 naming missing ids
    PARTIAL_FAILURE = "partial_failure"  # a batch write answers 207, some inputs not written
    ANSWER_LOST = "answer_lost"  # the request is applied, then the connection drops unanswered


GENERIC_FAULTS = frozenset(
    {
        FaultKind.STATUS,
        FaultKind.RESET,
        FaultKind.TRUNCATED_JSON,
        FaultKind.SHORT_BODY,
        FaultKind.SLOW,
    }
)


@dataclass(eq=False)
class Fault:
    """One injectable fault.

    Targeting (all optional, all must match):

    * ``endpoint`` - an endpoint name of the emulator (e.g. ``"memberships"``);
    * ``page`` - 0-based page index (page 0 is the request without a cursor);
    * ``nth`` - 1-based request ordinal from which the fault is eligible; counted per endpoint
      when ``endpoint`` is set, else over all requests. ``nth=3, times=2`` fails the 3rd and
      4th request;
    * ``times`` - how many requests it fires on (``None`` = every matching request).

    ``kind`` may also be a status code such as ``"503"`` or ``429``: shorthand for
    ``kind="status", status=...``. ``delay`` (seconds) applies before any kind, so a slow 503 is
    possible; ``kind="slow"`` is a delay followed by the normal response.
    """

    kind: str | int
    endpoint: str | None = None
    page: int | None = None
    nth: int | None = None
    times: int | None = 1
    status: int | None = None
    delay: float = 0.0
    retry_after: int | str | None = None  # Retry-After: seconds or an HTTP-date; None = none
    headers: Mapping[str, str] = field(default_factory=dict)  # extra response headers
    body: Any = None  # overrides the error body (JSON-able, or str/bytes sent verbatim)
    policy: str = "TEN_SECONDLY_ROLLING"  # rate_limit: TEN_SECONDLY_ROLLING | SECONDLY | DAILY
    rate_headers: bool = True  # rate_limit: send the X-HubSpot-RateLimit-* headers
    list_size: int | None = None  # list_size: the size to report (None = true size + 1)
    processing_status: str = "PROCESSING"  # processing_status: the status to report
    # missing_companies: ids to drop (None = first input); partial_failure: input keys to fail
    ids: tuple[str, ...] | None = None
    every: int | None = None  # partial_failure: also fail every k-th input (1-based)
    hold: float = 0.0  # answer_lost: seconds between applying and dropping (past a read timeout)
    fired: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        kind = str(self.kind)
        if kind.isdigit():
            self.status = int(kind)
            kind = FaultKind.STATUS
        self.kind = FaultKind(kind)  # ValueError names the bad kind
        if self.kind is FaultKind.STATUS and self.status is None:
            self.status = 500
        if self.kind is FaultKind.SLOW and self.delay <= 0:
            raise ValueError("a slow fault needs delay > 0")
        if self.times is not None and self.times < 1:
            raise ValueError("times must be >= 1 or None")
        if self.nth is not None and self.nth < 1:
            raise ValueError("nth is 1-based")
        if self.page is not None and self.page < 0:
            raise ValueError("page is 0-based")
        if self.ids is not None:
            self.ids = tuple(str(i) for i in self.ids)
        if self.every is not None and self.every < 1:
            raise ValueError("every is 1-based: every=3 fails the 3rd, 6th, ... input")
        if self.hold < 0:
            raise ValueError("hold must be >= 0 seconds")

    @property
    def exhausted(self) -> bool:
        """True once the fault has fired ``times`` times."""
        return self.times is not None and self.fired >= self.times

    def matches(self, endpoint: str, page: int | None, nth: int, seq: int) -> bool:
        """Whether this fault applies to a request (ignores exhaustion)."""
        if self.endpoint is not None and self.endpoint != endpoint:
            return False
        if self.page is not None and self.page != page:
            return False
        ordinal = nth if self.endpoint is not None else seq
        return self.nth is None or ordinal >= self.nth


class FaultRegistry:
    """Thread-safe, ordered set of faults; the first eligible fault fires for a request."""

    def __init__(
        self,
        kinds: Iterable[str],
        endpoints: Iterable[str],
        kind_endpoints: Mapping[str, str | tuple[str, ...]] | None = None,
    ) -> None:
        self._kinds = frozenset(FaultKind(k) for k in kinds)
        self._endpoints = frozenset(endpoints)
        # Data-level faults only make sense on one endpoint (or a few); default and enforce it
        # so a mistargeted fault fails loudly instead of being consumed by an unrelated request.
        self._kind_endpoints = dict(kind_endpoints or {})
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault) -> Fault:
        """Register ``fault`` and return it (read ``.fired`` later)."""
        if fault.kind not in self._kinds:
            raise ValueError(f"fault kind {fault.kind!r} not supported here: {sorted(self._kinds)}")
        required = self._kind_endpoints.get(fault.kind)
        if fault.endpoint is None and isinstance(required, str):
            fault.endpoint = required
        if fault.endpoint is not None and fault.endpoint not in self._endpoints:
            raise ValueError(f"unknown endpoint {fault.endpoint!r}: {sorted(self._endpoints)}")
        if isinstance(required, str) and fault.endpoint != required:
            raise ValueError(f"{fault.kind} faults apply to endpoint {required!r} only")
        if isinstance(required, tuple) and fault.endpoint not in required:
            raise ValueError(f"{fault.kind} faults need one of the endpoints {sorted(required)}")
        with self._lock:
            self._faults.append(fault)
        return fault

    def remove(self, fault: Fault) -> None:
        """Withdraw one fault."""
        with self._lock:
            self._faults = [f for f in self._faults if f is not fault]

    def clear(self) -> None:
        """Withdraw every fault."""
        with self._lock:
            self._faults.clear()

    def all(self) -> list[Fault]:
        """Every registered fault, fired or not, in registration order."""
        with self._lock:
            return list(self._faults)

    def pending(self) -> list[Fault]:
        """Faults that can still fire."""
        with self._lock:
            return [f for f in self._faults if not f.exhausted]

    def pick(self, endpoint: str, page: int | None, nth: int, seq: int) -> Fault | None:
        """Atomically choose and consume the fault for one request."""
        with self._lock:
            for fault in self._faults:
                if not fault.exhausted and fault.matches(endpoint, page, nth, seq):
                    fault.fired += 1
                    return fault
        return None
