"""Turning plain values into Dagster metadata (shared by every asset and check)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import dagster as dg


def metadata_value(value: Any) -> Any:
    """A value Dagster can store: dicts and lists as JSON, None as the text ``n/a``."""
    if value is None:
        return dg.MetadataValue.text("n/a")
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        return dg.MetadataValue.json(_jsonable(value))
    if isinstance(value, datetime | date):
        return dg.MetadataValue.text(value.isoformat())
    if isinstance(value, Decimal):
        return float(value)
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value


def as_metadata(values: Mapping[str, Any]) -> dict[str, Any]:
    return {key: metadata_value(value) for key, value in values.items()}


def tables_written(primary: str, *others: str) -> dict[str, Any]:
    """Definition metadata naming every table an asset writes: ``dagster/table_name`` is the
    one the asset is about; ``tables_written`` lists them all (docs/pipeline.md). Each table
    has one writer, except the bucket tables, whose score columns ``tenant_scores`` updates."""
    return {"dagster/table_name": primary, "tables_written": ", ".join((primary, *others))}
