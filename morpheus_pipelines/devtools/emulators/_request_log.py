"""The emulators' request log: every request as it arrived and how it was answered.

It is also the source of the request ordinals (``seq`` over all requests, ``nth`` per
endpoint) that :class:`~._faults.Fault` targeting counts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["RequestLog", "RequestRecord"]


@dataclass(frozen=True)
class RequestRecord:
    """One request as the emulator saw it.

    ``status`` is None while the request is pending and when no response was sent
    (``outcome`` ``"reset"``, ``"aborted"`` or ``"answer_lost"``: applied, then dropped).
    ``seq`` is the 1-based ordinal over all requests, ``nth`` the ordinal within ``endpoint``.
    Authorization headers are not kept, nor the value of an ``access_token`` query parameter.
    """

    seq: int
    nth: int
    timestamp: float
    method: str
    path: str
    query: dict[str, str]
    endpoint: str
    body: Any
    page: int | None = None
    fault: str | None = None
    status: int | None = None
    outcome: str = "pending"  # pending | responded | reset | aborted | answer_lost
    error: str | None = None


class RequestLog:
    """Thread-safe request log, also the source of request ordinals for fault targeting."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._records: list[RequestRecord] = []
        self._index: dict[int, int] = {}
        self._seq = 0
        self._per_endpoint: dict[str, int] = {}

    def _open(
        self, method: str, path: str, query: dict[str, str], endpoint: str, body: Any
    ) -> RequestRecord:
        with self._cond:
            self._seq += 1
            nth = self._per_endpoint.get(endpoint, 0) + 1
            self._per_endpoint[endpoint] = nth
            record = RequestRecord(
                seq=self._seq,
                nth=nth,
                timestamp=time.time(),
                method=method,
                path=path,
                query=query,
                endpoint=endpoint,
                body=body,
            )
            self._index[record.seq] = len(self._records)
            self._records.append(record)
            self._cond.notify_all()
            return record

    def _update(self, seq: int, **changes: Any) -> None:
        with self._cond:
            pos = self._index.get(seq)
            if pos is not None:  # None when the log was cleared mid-request
                self._records[pos] = replace(self._records[pos], **changes)
            self._cond.notify_all()

    def entries(self, endpoint: str | None = None) -> list[RequestRecord]:
        """A snapshot of the records, oldest first, optionally for one endpoint."""
        with self._cond:
            return [r for r in self._records if endpoint is None or r.endpoint == endpoint]

    def statuses(self, endpoint: str | None = None) -> list[int | None]:
        """Response statuses in arrival order (None for reset/aborted/pending)."""
        return [r.status for r in self.entries(endpoint)]

    def count(
        self, endpoint: str | None = None, *, status: int | None = None, fault: str | None = None
    ) -> int:
        """Number of records matching every given criterion."""
        return sum(
            1
            for r in self.entries(endpoint)
            if (status is None or r.status == status) and (fault is None or r.fault == fault)
        )

    def last(self, endpoint: str | None = None) -> RequestRecord | None:
        """The most recent record, if any."""
        records = self.entries(endpoint)
        return records[-1] if records else None

    def wait_until(
        self, predicate: Callable[[list[RequestRecord]], bool], timeout: float = 5.0
    ) -> bool:
        """Block until ``predicate(entries)`` holds (True) or ``timeout`` passes (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(list(self._records)), timeout)

    def clear(self) -> None:
        """Forget all records and restart the request ordinals used by ``Fault.nth``."""
        with self._cond:
            self._records.clear()
            self._index.clear()
            self._seq = 0
            self._per_endpoint.clear()

    def __len__(self) -> int:
        with self._cond:
            return len(self._records)
