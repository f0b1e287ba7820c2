"""The keyset cursors of ``GET /v1/leads`` and ``GET /v1/leads/{lead_id}/timeline``
(docs/leads.md): ``<microseconds since 1970-01-01 UTC>.<row key>``, the position of the last
row of a page, newest first.

Plain text rather than an opaque encoding, so the document can say exactly which cursors
the service takes (:data:`LEAD_CURSOR`, :data:`ACTIVITY_CURSOR`): every text of that shape is
a position, and a moment beyond what a timestamp holds is read as the end of time (or its
start), which pages from the newest (or finds nothing older). Anything else is refused.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_MICROS = r"-?[0-9]{1,20}"
LEAD_CURSOR = rf"^{_MICROS}\.[0-9a-f]{{32}}$"
ACTIVITY_CURSOR = rf"^{_MICROS}\.[1-9][0-9]{{0,17}}$"  # a positive BIGINT id
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def encode(moment: datetime, key: str) -> str:
    return f"{(moment - _EPOCH) // timedelta(microseconds=1)}.{key}"


def decode(cursor: str, pattern: str) -> tuple[datetime, str] | None:
    """``(moment, key)`` of a cursor of ``pattern``'s shape, else ``None``."""
    if not re.fullmatch(pattern, cursor):
        return None
    micros, _, key = cursor.partition(".")
    try:
        moment = _EPOCH + timedelta(microseconds=int(micros))
    except OverflowError:
        moment = _LATEST if not micros.startswith("-") else _EARLIEST
    return moment, key
