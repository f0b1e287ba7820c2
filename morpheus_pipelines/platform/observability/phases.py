"""Wall time per phase of a run: what a run spent where, for its log line and metadata
(docs/performance.md reads these to say where a quiet day's seconds go)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def phase(phases: dict[str, float], name: str) -> Iterator[None]:
    """Add the block's wall time, in seconds, to ``phases[name]``."""
    started = time.perf_counter()
    try:
        yield
    finally:
        phases[name] = round(phases.get(name, 0.0) + time.perf_counter() - started, 3)
