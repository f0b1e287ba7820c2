"""Declarative base. ORM attribute names equal column names (docs/data-layer.md), so the
column lists passed to ``upsert`` are literal SQL identifiers."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, MetaData, PrimaryKeyConstraint, Table, Text, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

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


# The views the migrations create: mapped for reading, kept out of ``Base.metadata`` so the
# comparison of the models with the migrated schema sees tables only.
VIEWS = MetaData(naming_convention=NAMING_CONVENTION)


def day_view(
    name: str, versions: Table, days: Table | None = None, *, hidden: tuple[str, ...] = ()
) -> Table:
    """The view ``name`` over a day-versioned table (``platform.store.day_versions``): the
    versions' columns without their range and without ``hidden`` (bookkeeping of the
    versions the view does not show), and the day each row answers, ``partition_key``; with
    ``days``, also what the days table records of each day besides whether it is complete (a
    column the versions have too is the version's)."""
    key = [c.name for c in versions.primary_key.columns if c.name != "valid_from"]
    day_columns = [] if days is None else [c for c in days.columns if c.name not in versions.c]
    columns = []
    omitted = {"valid_from", "valid_to", "partition_key", "complete", *hidden}
    for column in [*versions.columns, *day_columns]:
        if column.name not in omitted:
            copy = column._copy()
            copy.primary_key = False
            columns.append(copy)
    return Table(
        name,
        VIEWS,
        Column("partition_key", Text, nullable=False),
        *columns,
        PrimaryKeyConstraint("partition_key", *key),
    )


class WrittenDay:
    """The columns of a day-versioned table's days (``platform.store.day_versions``)."""

    partition_key: Mapped[str] = mapped_column(Text, primary_key=True)
    # False while the day is being written over several transactions: it answers nothing.
    complete: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default=text("true"))


def mapped_tables(package: str) -> dict[str, Table]:
    """The tables of the models declared under ``package`` (imported), by table name."""
    return {
        mapper.local_table.name: mapper.local_table
        for mapper in Base.registry.mappers
        if mapper.class_.__module__.startswith(f"{package}.")
        and isinstance(mapper.local_table, Table)
    }
