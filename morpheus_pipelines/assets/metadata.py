"""Turning plain values into Dagster metadata (shared by every asset and check), and the
definition metadata of the tables an asset writes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from morpheus_pipelines.crm.repositories.tables import CRM_TABLES
from morpheus_pipelines.tenants.store.tables import TENANT_TABLES

ROW_COUNT = "dagster/row_count"


def metadata_value(value: Any) -> dg.MetadataValue:
    """The typed Dagster value of a plain one: numbers stay numbers (an ``int`` an
    ``IntMetadataValue``, a ``float`` or ``Decimal`` a ``FloatMetadataValue``), an aware
    ``datetime`` a timestamp, a ``date`` its ISO text, dicts and lists JSON. ``None`` has no
    value: :func:`as_metadata` leaves such keys out rather than writing a placeholder."""
    if isinstance(value, dg.MetadataValue):
        return value
    if value is None:
        raise TypeError("None is not a metadata value: leave the key out")
    if isinstance(value, bool):  # before int: a bool is an int to Python
        return dg.MetadataValue.bool(value)
    if isinstance(value, int):
        return dg.MetadataValue.int(value)
    if isinstance(value, float | Decimal):
        return dg.MetadataValue.float(float(value))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"a naive datetime is no timestamp: {value.isoformat()}")
        return dg.MetadataValue.timestamp(value)
    if isinstance(value, date):
        return dg.MetadataValue.text(value.isoformat())
    if isinstance(value, Enum):
        return metadata_value(value.value)
    if isinstance(value, Mapping | list | tuple | set | frozenset):
        return dg.MetadataValue.json(_jsonable(value))
    return dg.MetadataValue.text(str(value))


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(getattr(k, "value", k)): _jsonable(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(_jsonable(v) for v in value)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, Enum):
        return value.value
    return value


def as_metadata(values: Mapping[str, Any]) -> dict[str, dg.MetadataValue]:
    """Typed metadata for a run's figures; a ``None`` value is absent, not ``"n/a"``.
    ``dagster/row_count`` is an integer or absent (Dagster's ``TableMetadataSet`` refuses
    anything else), so a figure that is not one is a bug here, not a string in the UI."""
    row_count = values.get(ROW_COUNT)
    if row_count is not None and (isinstance(row_count, bool) or not isinstance(row_count, int)):
        raise TypeError(f"{ROW_COUNT} must be an int or None, not {row_count!r}")
    return {key: metadata_value(value) for key, value in values.items() if value is not None}


# --- the tables an asset writes ------------------------------------------------------------

# Every table of the two products' models, by name (no name is in both).
_MODEL_TABLES: Mapping[str, sa.Table] = {**TENANT_TABLES, **CRM_TABLES}
_DIALECT = postgresql.dialect()


def model_table(name: str) -> sa.Table:
    """The SQLAlchemy table of a warehouse table name; a name without a model is a typo."""
    try:
        return _MODEL_TABLES[name]
    except KeyError:
        raise KeyError(f"no model declares the table {name!r}") from None


def table_schema(table: sa.Table) -> dg.TableSchema:
    """``dagster/column_schema`` from a model's table: each column's name, its PostgreSQL
    type, nullable/unique/primary key, and the column's comment (or ``doc``) when it has
    one."""
    columns = []
    for column in table.columns:
        other = ["primary key"] if column.primary_key else []
        if column.foreign_keys:
            other += sorted(f"references {fk.target_fullname}" for fk in column.foreign_keys)
        columns.append(
            dg.TableColumn(
                name=column.name,
                type=column.type.compile(dialect=_DIALECT).lower(),
                description=column.comment or column.doc,
                constraints=dg.TableColumnConstraints(
                    nullable=bool(column.nullable),
                    unique=bool(column.unique),
                    other=other or None,
                ),
            )
        )
    return dg.TableSchema(columns=columns)


def tables_written(primary: str, *others: str) -> dict[str, Any]:
    """Definition metadata naming every table an asset writes: ``dagster/table_name`` is the
    one the asset is about, with its ``dagster/column_schema`` from its model;
    ``tables_written`` lists them all (docs/pipeline.md). Each table has one writer, except
    the bucket tables, whose score columns ``tenant_scores`` updates."""
    for name in (primary, *others):
        model_table(name)
    return {
        "dagster/table_name": primary,
        "dagster/column_schema": table_schema(model_table(primary)),
        "tables_written": ", ".join((primary, *others)),
    }
