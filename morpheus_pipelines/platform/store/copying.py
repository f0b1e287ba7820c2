"""``COPY`` in and out of the session's connection: DataFrames into tables, query results out
as DataFrames or as raw ``COPY`` chunks, and a partition streamed from one database into
another (the text conversion is ``copy_csv``'s)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.copy_csv import (
    ARROW_TYPES,
    COPY_OPTIONS,
    csv_frame,
    frame_csv,
)


def frame_records(frame: pd.DataFrame, columns: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    """Rows of ``frame[columns]`` as tuples of plain Python values, missing values as None
    (pandas' NaN/NA/NaT would otherwise reach COPY as text or fail to adapt)."""
    arrays = []
    for name in columns:
        column = frame[name]
        values = column.astype(object)
        arrays.append(values.where(column.notna(), None).to_numpy())
    return zip(*arrays, strict=True)


def write_frame(session: Session, table: str, frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """COPY ``frame[columns]`` into ``table`` in slices of 50,000 rows (bounded text size)."""
    statement = sql.SQL("COPY {} ({}) FROM STDIN {}").format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(COPY_OPTIONS),
    )
    with driver_cursor(session) as cursor, cursor.copy(statement) as copy:
        for start in range(0, len(frame), 50_000):
            copy.write(frame_csv(frame.iloc[start : start + 50_000], columns))


def read_frame(session: Session, query: sql.Composable) -> pd.DataFrame:
    """Run a read on the session's connection and return the rows as a DataFrame.

    When every column has a type Arrow parses exactly (``copy_csv.ARROW_TYPES``) the rows
    are COPYed out as CSV and parsed in C; otherwise they are fetched as Python objects.
    """
    with driver_cursor(session) as cursor:
        cursor.execute(sql.SQL("SELECT * FROM ({}) AS q LIMIT 0").format(query))
        columns = [(d.name, d.type_code) for d in cursor.description]
        if all(oid in ARROW_TYPES for _, oid in columns):
            data = bytearray()
            with cursor.copy(sql.SQL("COPY ({}) TO STDOUT (FORMAT csv)").format(query)) as copy:
                for chunk in copy:
                    data += chunk
            return csv_frame(bytes(data), columns)
        cursor.execute(query)
        rows = cursor.fetchall()
    return pd.DataFrame.from_records(rows, columns=[name for name, _ in columns])


def copy_out(source: Session, select: sql.Composable) -> Iterator[bytes]:
    """The rows of ``select`` on ``source`` as ``COPY … TO STDOUT`` text-format chunks."""
    with (
        driver_cursor(source) as reader,
        reader.copy(sql.SQL("COPY ({}) TO STDOUT").format(select)) as rows_out,
    ):
        yield from rows_out


def copy_into_empty_partition(
    session: Session,
    *,
    table: str,
    columns: Sequence[str],
    select: sql.Composable,
    source: Session,
    partition_key: str,
) -> int | None:
    """When ``table`` has no row of ``partition_key`` yet, stream the rows ``select`` gives
    on ``source`` (``COPY … TO STDOUT``, in ``columns`` order) into it with ``COPY … FROM
    STDIN`` on ``session``, as bytes, never parsed, and return rows written; otherwise None
    and nothing written. ``source`` may be another database. The partition stays locked
    (an advisory lock) until ``session``'s transaction ends, so a concurrent run of the same
    partition waits and then finds it written."""
    if not _claim_empty_partition(session, table, partition_key):
        return None
    return stream_copy(session, table=table, columns=columns, select=select, source=source)


def stream_copy(
    session: Session, *, table: str, columns: Sequence[str], select: sql.Composable, source: Session
) -> int:
    """Stream the rows ``select`` gives on ``source`` (``COPY … TO STDOUT``, in ``columns``
    order) into ``table`` with ``COPY … FROM STDIN`` on ``session``, as bytes, never parsed;
    returns rows written. ``source`` may be another database."""
    targets = sql.SQL(", ").join(map(sql.Identifier, columns))
    with driver_cursor(session) as writer:
        with writer.copy(
            sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), targets)
        ) as rows_in:
            for chunk in copy_out(source, select):
                rows_in.write(chunk)
        return max(writer.rowcount, 0)


def _claim_empty_partition(session: Session, table: str, partition_key: str) -> bool:
    """Lock the table's partition for the rest of the transaction; True when it is empty."""
    with driver_cursor(session) as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{table}:{partition_key}",)
        )
        cursor.execute(
            sql.SQL("SELECT NOT EXISTS (SELECT 1 FROM {} WHERE partition_key = %s)").format(
                sql.Identifier(table)
            ),
            (partition_key,),
        )
        return bool(cursor.fetchone()[0])
