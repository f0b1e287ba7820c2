"""The shared plumbing: fault matching, request log, rolling-window limiter."""

from __future__ import annotations

import threading

import pytest

from morpheus_pipelines.devtools.emulators import Fault, FaultKind, RequestLog
from morpheus_pipelines.devtools.emulators._faults import FaultRegistry
from morpheus_pipelines.devtools.emulators._rate_limit import RollingWindowLimiter


def _registry() -> FaultRegistry:
    return FaultRegistry(
        [FaultKind.STATUS, FaultKind.LIST_SIZE], ["list", "memberships"], {"list_size": "list"}
    )


def test_status_shorthand_and_validation() -> None:
    fault = Fault(503)
    assert (fault.kind, fault.status) == (FaultKind.STATUS, 503)
    assert Fault("status").status == 500
    for bad in ({"times": 0}, {"nth": 0}, {"page": -1}):
        with pytest.raises(ValueError):
            Fault("500", **bad)


def test_pick_respects_endpoint_page_nth_and_times() -> None:
    registry = _registry()
    paged = registry.add(Fault("500", endpoint="memberships", page=2, times=2))
    nth = registry.add(Fault("502", endpoint="list", nth=3))
    assert registry.pick("memberships", 1, 1, 1) is None
    assert registry.pick("memberships", 2, 2, 2) is paged
    assert registry.pick("list", None, 2, 3) is None  # list ordinal 2 < 3
    assert registry.pick("list", None, 3, 4) is nth
    assert registry.pick("memberships", 2, 3, 5) is paged
    assert registry.pick("memberships", 2, 4, 6) is None  # exhausted
    assert (paged.fired, nth.fired) == (2, 1)
    assert registry.pending() == []
    assert len(registry.all()) == 2


def test_global_nth_counts_all_requests() -> None:
    registry = _registry()
    fault = registry.add(Fault("500", nth=2, times=None))
    assert registry.pick("list", None, 1, 1) is None
    assert registry.pick("memberships", 0, 1, 2) is fault
    assert registry.pick("list", None, 2, 3) is fault
    registry.remove(fault)
    assert registry.pick("list", None, 3, 4) is None


def test_first_registered_fault_wins_and_pick_is_atomic() -> None:
    registry = _registry()
    registry.add(Fault("500", times=50))
    registry.add(Fault("503", times=50))
    picked: list[int | None] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(25):
            fault = registry.pick("list", None, 1, 1)
            with lock:
                picked.append(fault.status if fault else None)

    threads = [threading.Thread(target=worker) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(picked, key=str) == [500] * 50 + [503] * 50 + [None] * 25


def test_request_log_ordinals_and_clear() -> None:
    log = RequestLog()
    a = log._open("GET", "/a", {}, "list", None)
    b = log._open("GET", "/b", {}, "memberships", None)
    c = log._open("GET", "/c", {}, "list", None)
    assert [(r.seq, r.nth) for r in (a, b, c)] == [(1, 1), (2, 1), (3, 2)]
    log._update(b.seq, status=503, outcome="responded", fault="status")
    assert log.statuses() == [None, 503, None]
    assert log.count(status=503) == log.count("memberships", fault="status") == 1
    assert log.wait_until(lambda rs: rs[1].status == 503, timeout=0.1)
    assert not log.wait_until(lambda rs: len(rs) > 3, timeout=0.05)
    log.clear()
    assert len(log) == 0
    log._update(b.seq, status=200)  # a request finishing after clear() is ignored
    assert log._open("GET", "/a", {}, "list", None).seq == 1


def test_rolling_window_limiter() -> None:
    now = [0.0]
    limiter = RollingWindowLimiter(2, 10.0, clock=lambda: now[0])
    assert limiter.acquire() == (True, 1, 0.0)
    now[0] = 4.0
    assert limiter.acquire() == (True, 0, 0.0)
    assert limiter.acquire() == (False, 0, 6.0)
    now[0] = 10.0  # the first stamp leaves the window
    assert limiter.acquire()[0]
    with pytest.raises(ValueError):
        RollingWindowLimiter(0)
