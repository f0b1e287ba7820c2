"""What the cyclic collector saw while a block ran (platform/heap.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def frozen_at_collections() -> Iterator[list[int]]:
    """The number of frozen objects at the start of each collection while the block runs."""
    seen: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(gc.get_freeze_count())

    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)
