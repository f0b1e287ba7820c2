"""The writer thread behind routing's and scoring's chunks: writes overlap the next chunk's
preparation, keep their order, and a failure stops every later write."""

from __future__ import annotations

import threading
import time

import pytest

from morpheus_pipelines.platform.store.write_behind import write_behind

WAIT = 10  # seconds; only reached when the behaviour under test is broken


def test_a_chunk_is_written_while_the_next_is_prepared() -> None:
    next_prepared = threading.Event()
    seen: list[bool] = []

    def write(item: int) -> int:
        if item == 0:
            # Synchronous writing would wait here for the caller, which waits for the write.
            seen.append(next_prepared.wait(WAIT))
        return item

    with write_behind(write) as writer:
        writer.submit(0, then=lambda _: None)
        next_prepared.set()  # the caller prepares chunk 1 while chunk 0 is written
        writer.submit(1, then=lambda _: None)
    assert seen == [True]


def test_writes_and_what_follows_them_keep_their_order_on_the_callers_thread() -> None:
    written: list[int] = []
    followed: list[tuple[int, str]] = []

    def write(item: int) -> int:
        written.append(item)
        return item * 10

    with write_behind(write) as writer:
        for item in range(5):
            writer.submit(
                item, then=lambda result: followed.append((result, threading.current_thread().name))
            )
            # At most two chunks are held: the one before this one has been followed.
            assert [r for r, _ in followed] == [i * 10 for i in range(item)]
    assert written == [0, 1, 2, 3, 4]
    assert followed == [(i * 10, threading.main_thread().name) for i in range(5)]


def test_a_failed_write_is_raised_and_no_later_write_starts() -> None:
    written: list[int] = []
    followed: list[int] = []
    gate = threading.Event()

    def write(item: int) -> int:
        if item == 1:
            gate.wait(WAIT)  # chunk 2 is queued behind this one before it fails
            raise RuntimeError("chunk 1 failed")
        written.append(item)
        return item

    with pytest.raises(RuntimeError, match="chunk 1 failed"), write_behind(write) as writer:
        writer.submit(0, then=followed.append)
        writer.submit(1, then=followed.append)
        gate.set()
        writer.submit(2, then=followed.append)
        writer.submit(3, then=followed.append)
    assert written == [0]
    assert followed == [0]


def test_when_the_caller_fails_the_write_in_flight_still_counts() -> None:
    followed: list[int] = []
    started = threading.Event()
    written: list[int] = []

    def write(item: int) -> int:
        started.set()
        written.append(item)
        return item

    with pytest.raises(ValueError, match="scoring chunk 1"), write_behind(write) as writer:
        writer.submit(0, then=followed.append)
        assert started.wait(WAIT)
        raise ValueError("scoring chunk 1 failed")
    assert written == [0]
    assert followed == [0]  # chunk 0 committed, so its events and totals are recorded


def test_a_failed_write_stops_the_caller_before_the_next_chunks_work() -> None:
    """Routing, scoring and enrichment check before each chunk: no events or Domain
    Intelligence requests are spent on a chunk that would never be written."""

    def write(item: int) -> int:
        raise RuntimeError(f"chunk {item} failed")

    deadline = time.monotonic() + WAIT
    with pytest.raises(RuntimeError, match="chunk 0 failed"), write_behind(write) as writer:
        writer.submit(0, then=lambda _: None)
        while time.monotonic() < deadline:  # the caller's loop, up to its next chunk
            writer.raise_if_failed()
        pytest.fail("the failed write was not raised before the next chunk")
