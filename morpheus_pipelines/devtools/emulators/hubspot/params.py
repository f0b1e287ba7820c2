"""Query parameters and paging cursors of the emulated HubSpot API; a bad one is a 400."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping


def _sort_key(record_id: str) -> tuple[int, int, str]:
    # HubSpot sorts memberships by numeric recordId; non-numeric ids (tests only) sort after.
    return (0, int(record_id), "") if record_id.isdigit() else (1, 0, record_id)


def _encode_cursor(record_id: str) -> str:
    return base64.urlsafe_b64encode(record_id.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"invalid paging cursor {cursor!r}") from exc


class _BadRequest(ValueError):
    """Becomes a 400 VALIDATION_ERROR."""


def _decode_or_400(cursor: str) -> str:
    try:
        return _decode_cursor(cursor)
    except ValueError as exc:
        raise _BadRequest(str(exc)) from exc


def _int_param(
    query: Mapping[str, str], name: str, default: int, low: int, high: int | None
) -> int:
    raw = query.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise _BadRequest(f"'{name}' must be an integer, got {raw!r}") from exc
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise _BadRequest(f"'{name}' must be {bound}, got {value}")
    return value
