"""Write one chunk while the next is prepared: a single writer thread behind the caller.

A chunked run reads and computes a chunk in Python, then waits while PostgreSQL writes it.
With the write on a thread of its own, the server works on chunk N while the caller reads and
computes chunk N+1 (docs/decisions/0043). Writes keep their
order, each in its own transaction as before; at most two chunks are held (one writing, one
waiting), so memory stays bounded by the chunk size. Whatever follows a write (totals, phase
times, event lines, the log) runs on the caller's thread, in order, once that write has
committed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class WriteSkipped(Exception):
    """A write not attempted because an earlier one failed (its error is the one raised)."""


class WriteBehind(Generic[T, R]):
    """Submit chunks to ``write``; see :func:`write_behind`."""

    def __init__(self, pool: ThreadPoolExecutor, write: Callable[[T], R]) -> None:
        self._pool = pool
        self._write = write
        self._failed = threading.Event()
        self._pending: tuple[Future[R], Callable[[R], None]] | None = None

    def _run(self, item: T) -> R:
        # One worker: an earlier write has finished (or failed) before this one starts.
        if self._failed.is_set():
            raise WriteSkipped
        try:
            return self._write(item)
        except BaseException:
            self._failed.set()
            raise

    def submit(self, item: T, then: Callable[[R], None]) -> None:
        """Queue ``item``'s write, then wait for the previous write and call its ``then``
        with its result (raising its error, if it failed)."""
        future = self._pool.submit(self._run, item)
        previous, self._pending = self._pending, (future, then)
        if previous is not None:
            self._finish(previous)

    def raise_if_failed(self) -> None:
        """Raise a failed write's error now, before the caller spends work on the next
        chunk (events, requests) that would never be written."""
        if self._failed.is_set():
            self.drain()

    def drain(self) -> None:
        """Wait for the last write and call its ``then``."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._finish(pending)

    def abandon(self) -> None:
        """After the caller failed: no write starts any more (one queued but not started is
        dropped; its transaction never begins); one already started finishes (it commits or
        rolls back on its own) and its ``then`` still runs if it committed, so what was
        written is accounted for."""
        self._failed.set()
        pending, self._pending = self._pending, None
        if pending is None:
            return
        future, then = pending
        try:
            result = future.result()
        except BaseException:  # the caller's error is the one to raise
            return
        then(result)

    @staticmethod
    def _finish(pending: tuple[Future[R], Callable[[R], None]]) -> None:
        future, then = pending
        then(future.result())


@contextmanager
def write_behind(write: Callable[[T], R]) -> Iterator[WriteBehind[T, R]]:
    """A writer thread for the block: ``submit(item, then)`` writes ``item`` behind the
    caller's back; leaving the block waits for the last write. If a write fails, its error is
    raised at the next ``submit`` or ``raise_if_failed`` (or on leaving) and no later write
    starts."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="write-behind") as pool:
        writer = WriteBehind(pool, write)
        try:
            yield writer
        except BaseException:
            writer.abandon()
            raise
        writer.drain()
