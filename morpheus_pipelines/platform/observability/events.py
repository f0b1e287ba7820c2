"""Structured, single-line JSON event logs (docs/observability.md).

Every event is one JSON object on one line of the ``morpheus.events`` logger, searchable by
``run_id``, ``tenant_id``, ``sync_id``, ``tenant_bucket`` and ``event``. Two guards keep
secrets and PII out:

* a field whose name ends in ``email`` is masked (``j***@acme.com``) before it is written;
* any other email-shaped text in the line is masked the same way, and every registered secret
  is replaced by ``***`` (:mod:`.redaction`).

Fields bound with :func:`event_fields` (the intake binds each request's ``request_id``) are
written on every line logged inside the block, threads it starts with the context included
(``anyio.to_thread`` copies it).

Dagster's own log (``context.log``) gets batch progress and totals; per-tenant events go to
:class:`~morpheus_pipelines.tenants.steps.tenant_events.TenantEventLog`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import math
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from morpheus_pipelines.platform.observability.redaction import mask_email, mask_emails, redact

LOGGER_NAME = "morpheus.events"


def is_nan(value: Any) -> bool:
    """NaN has no JSON form; it is written as null."""
    return isinstance(value, float) and math.isnan(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return value


def _masked(fields: dict[str, Any]) -> dict[str, Any]:
    return {
        key: mask_email(value) if key.endswith("email") and value is not None else value
        for key, value in fields.items()
    }


def format_event(event: str, level: str, fields: dict[str, Any]) -> str:
    """One JSON line: timestamp, level, event, then the (masked) fields."""
    record = {
        "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "level": level,
        "event": event,
        **_masked(fields),
    }
    line = json.dumps(
        {key: _jsonable(value) for key, value in record.items()},
        default=str,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return mask_emails(redact(line))


_events_logger = logging.getLogger(LOGGER_NAME)


def _logger() -> logging.Logger:
    logger = _events_logger
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


def log_events_to(path: Path) -> Path:
    """Send the structured event log to ``path`` (JSON lines) instead of stderr."""
    path.parent.mkdir(parents=True, exist_ok=True)
    logger = _logger()
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    return path


_bound_fields: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "morpheus_event_fields", default=None
)


@contextlib.contextmanager
def event_fields(**fields: Any) -> Iterator[None]:
    """Write ``fields`` on every event line logged inside the block (in this context)."""
    token = _bound_fields.set({**(_bound_fields.get() or {}), **fields})
    try:
        yield
    finally:
        _bound_fields.reset(token)


def log_event(event: str, *, level: int = logging.INFO, **fields: Any) -> None:
    """Write one structured event line, with the fields bound by :func:`event_fields`."""
    logger = _logger()
    if logger.isEnabledFor(level):
        bound = _bound_fields.get()
        if bound:
            fields = {**bound, **fields}
        logger.log(level, format_event(event, logging.getLevelName(level), fields))


def _json_texts(values: Any) -> tuple[Any, bool]:
    """The JSON text of each value as an Arrow string array ("null" for a missing value), and
    whether it is *bare*: the contents of strings without their quotes, none missing, which
    :func:`json_lines` quotes in the separators it joins them with."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed Python objects
        array = pa.array([_json_text(v) for v in values], pa.string())
        return pc.fill_null(array, "null"), False
    if isinstance(array, pa.ChunkedArray):  # an Arrow-backed pandas column in several chunks
        array = array.combine_chunks()
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        text = _escaped(array.cast(pa.string()))  # one string type for the join
        if not text.null_count:
            return text, True
        texts = pc.binary_join_element_wise(pa.scalar('"'), text, pa.scalar('"'), "")
    elif pa.types.is_boolean(kind):
        texts = pc.if_else(array, pa.scalar("true"), pa.scalar("false"))
    elif pa.types.is_integer(kind):
        texts = pc.cast(array, pa.string())
    elif pa.types.is_floating(kind):
        finite = pc.is_finite(array)  # NaN and infinities have no JSON form
        texts = pc.if_else(finite, pc.cast(array, pa.string()), pa.scalar(None, pa.string()))
    elif pa.types.is_null(kind):
        texts = pa.nulls(len(array), pa.string())
    else:  # anything else (dates, nested values): one value at a time
        texts = pa.array([_json_text(v) for v in array.to_pylist()], pa.string())
    return pc.fill_null(texts, "null"), False


def _escaped(array: Any) -> Any:
    """The strings of ``array`` escaped for a JSON string. Each kind of escape is applied only
    when a byte of the values needs it: ids and labels need none, and a scan of the bytes
    costs a small fraction of a replacement pass over them."""
    import pyarrow.compute as pc

    data = _value_bytes(array)
    if ((data == 0x5C) | (data == 0x22)).any():  # a backslash or a double quote
        array = pc.replace_substring(pc.replace_substring(array, "\\", "\\\\"), '"', '\\"')
    if (data < 0x20).any():  # rare: control characters as \u00XX escapes
        for code in range(32):
            array = pc.replace_substring(array, chr(code), f"\\u{code:04x}")
    return array


def _value_bytes(array: Any) -> Any:
    """The UTF-8 bytes of a string or large string array's values, as a NumPy view (no
    copy); those of its null slots too, which at worst cost an escape pass not needed."""
    import numpy as np
    import pyarrow as pa

    _, offsets, data = array.buffers()
    if data is None:  # every value null or empty
        return np.zeros(0, dtype=np.uint8)
    wide = pa.types.is_large_string(array.type)  # 64-bit offsets
    bounds = np.frombuffer(offsets, dtype=np.int64 if wide else np.int32)
    start, end = int(bounds[array.offset]), int(bounds[array.offset + len(array)])
    return np.frombuffer(data, dtype=np.uint8)[start:end]


def _json_text(value: Any) -> str | None:
    if value is None or is_nan(value):
        return None
    return json.dumps(_jsonable(value), default=str)


def json_lines(shared: dict[str, Any], per_row: dict[str, Any]) -> bytes:
    """One JSON object per row, newline-terminated: the ``shared`` fields (encoded once) then
    the ``per_row`` columns (equal-length arrays, Series or ranges; None for a column of
    nulls), in that order.

    Built column by column with Arrow compute (escaping, joining) instead of row by row,
    several times faster than pandas' JSON writer. A text column is escaped only when its
    bytes need it, and one without nulls is joined inside its quotes with no pass of its own
    (``benchmarks/event_lines.py``).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    lengths = {len(values) for values in per_row.values() if values is not None}
    if len(lengths) > 1:
        raise ValueError(f"per-row columns of different lengths: {sorted(lengths)}")
    rows = lengths.pop() if lengths else 0
    if not rows:
        return b""
    head = json.dumps(shared, default=str, separators=(",", ":"))[:-1]
    parts: list[Any] = [pa.scalar(head)]
    closing = ""  # the quote a bare column's values still need after them
    for position, (name, values) in enumerate(per_row.items()):
        comma = "," if position or len(head) > 1 else ""
        texts, bare = _json_texts(pa.nulls(rows) if values is None else values)  # None: null
        opening = '"' if bare else ""
        parts += [pa.scalar(f"{closing}{comma}{json.dumps(name)}:{opening}"), texts]
        closing = opening
    lines = pc.binary_join_element_wise(*parts, pa.scalar(f"{closing}}}\n"), "")
    # The lines are contiguous in the array's data buffer: take the bytes as they are.
    _, offsets, data = lines.buffers()
    width = 8 if pa.types.is_large_string(lines.type) else 4
    bounds = memoryview(offsets).cast("q" if width == 8 else "i")
    start, end = bounds[lines.offset], bounds[lines.offset + len(lines)]
    return data.slice(start, end - start).to_pybytes()
