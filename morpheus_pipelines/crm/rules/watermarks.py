"""Where an incremental read of HubSpot starts (the engagement sync, the task completions,
the reconciliation): its watermark minus an overlap, for what HubSpot's search index showed
late, or a look-back on the first run. Pure."""

from __future__ import annotations

from datetime import datetime, timedelta


def window_start(
    watermark: datetime | None, *, now: datetime, overlap: timedelta, first_run_lookback: timedelta
) -> datetime:
    """The watermark minus the overlap, or ``now`` minus the look-back when there is none."""
    return watermark - overlap if watermark is not None else now - first_run_lookback
