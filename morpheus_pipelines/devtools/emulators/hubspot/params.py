"""Query parameters and paging cursors of the emulated HubSpot API; a bad one is a 400."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any


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


MAX_BATCH_INPUTS = 100


def batch_read_request(request: Any) -> tuple[list[str], list[str]]:
    """``(ids, requested properties)`` of a ``batch/read`` body, or 400 as HubSpot refuses it:
    ``inputs``, ``properties`` and ``propertiesWithHistory`` are required, at most 100 inputs,
    each with an ``id`` (answered once however often it is asked)."""
    try:
        payload = request.json
    except ValueError as exc:
        raise _BadRequest(f"Invalid input JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise _BadRequest("Invalid input JSON: expected an object")
    for key in ("inputs", "properties", "propertiesWithHistory"):
        if not isinstance(payload.get(key), list):
            raise _BadRequest(f"Invalid input JSON: '{key}' must be an array")
    inputs = payload["inputs"]
    if len(inputs) > MAX_BATCH_INPUTS:
        raise _BadRequest(
            f"Batch input size {len(inputs)} exceeds the limit of {MAX_BATCH_INPUTS} inputs"
        )
    id_property = payload.get("idProperty")
    if id_property not in (None, "hs_object_id"):
        raise _BadRequest(f"idProperty {id_property!r} is not supported by the emulator")
    ids: list[str] = []
    for item in inputs:
        if not isinstance(item, dict) or item.get("id") in (None, ""):
            raise _BadRequest("Invalid input JSON: every input needs an 'id'")
        if str(item["id"]) not in ids:
            ids.append(str(item["id"]))
    return ids, [str(p) for p in payload["properties"]]
