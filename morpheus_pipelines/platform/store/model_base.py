"""Declarative base. ORM attribute names equal column names (docs/data-layer.md), so the
column lists passed to ``upsert`` are literal SQL identifiers."""

from __future__ import annotations

from sqlalchemy import MetaData, Table
from sqlalchemy.orm import DeclarativeBase

# Deterministic constraint names, so Alembic migrations and error messages are stable.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def mapped_tables(package: str) -> dict[str, Table]:
    """The tables of the models declared under ``package`` (imported), by table name."""
    return {
        mapper.local_table.name: mapper.local_table
        for mapper in Base.registry.mappers
        if mapper.class_.__module__.startswith(f"{package}.")
        and isinstance(mapper.local_table, Table)
    }
