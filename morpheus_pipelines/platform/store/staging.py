"""Staging tables: transaction-scoped temporary tables with a repository table's column types,
filled by ``COPY`` (rows, a DataFrame or raw ``COPY`` chunks) and analysed, for one set-based
statement to read."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
from psycopg import sql
from psycopg.types.json import Jsonb
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.base import BaseRepository, ModelT
from morpheus_pipelines.platform.store.copying import write_frame
from morpheus_pipelines.platform.store.planner import analyze_transient

_staging_counter = itertools.count()


def new_staging_name(prefix: str) -> str:
    return f"_stage_{prefix}_{next(_staging_counter)}"


class StagingRepository(BaseRepository[ModelT]):
    """``BaseRepository`` plus staging tables shaped like its table."""

    def create_staging(
        self,
        session: Session,
        *,
        columns: Sequence[str],
        extra_columns: Mapping[str, str] | None = None,
    ) -> str:
        """An empty temporary table with ``columns`` of this table, dropped at commit, plus
        ``extra_columns`` (name → SQL type, spelled in code, never taken from input)."""
        self._check_columns(columns, "staging columns")
        extras = [
            sql.SQL("NULL::{} AS {}").format(sql.SQL(kind), sql.Identifier(name))
            for name, kind in (extra_columns or {}).items()
        ]
        staging = new_staging_name(self.table.name)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "CREATE TEMP TABLE {staging} ON COMMIT DROP AS "
                    "SELECT {columns} FROM {target} WITH NO DATA"
                ).format(
                    staging=sql.Identifier(staging),
                    columns=sql.SQL(", ").join([*map(sql.Identifier, columns), *extras]),
                    target=sql.Identifier(self.table.name),
                )
            )
        return staging

    def has_column_types(
        self, session: Session, query: sql.Composable, *, columns: Sequence[str]
    ) -> bool:
        """Whether the columns of ``query`` (in ``columns`` order) have this table's types
        (compared by type, not by modifier): then its rows, read in place by a statement of
        the same database, are exactly what a staging table of ``columns`` would hold."""
        self._check_columns(columns, "compared columns")
        with driver_cursor(session) as cursor:
            cursor.execute(sql.SQL("SELECT * FROM ({}) AS q LIMIT 0").format(query))
            found = [column.type_code for column in cursor.description]
            cursor.execute(
                "SELECT attname, atttypid FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attname = ANY(%s) AND NOT attisdropped",
                (self.table.name, list(columns)),
            )
            types = dict(cursor.fetchall())
        return found == [types[name] for name in columns]

    def copy_into_staging(
        self, session: Session, rows: Iterable[Sequence[Any]], *, columns: Sequence[str]
    ) -> tuple[str, int]:
        """COPY ``rows`` (tuples in ``columns`` order) into a new temporary table.

        Returns the staging table's name and the number of rows copied. The table has the
        target's column types and is dropped at commit.
        """
        staging = self.create_staging(session, columns=columns)
        json_positions = [
            i for i, name in enumerate(columns) if isinstance(self.table.c[name].type, JSONB)
        ]
        column_list = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
        copied = 0
        with driver_cursor(session) as cursor:
            copy_sql = sql.SQL("COPY {staging} ({columns}) FROM STDIN").format(
                staging=sql.Identifier(staging), columns=column_list
            )
            with cursor.copy(copy_sql) as copy:
                for row in rows:
                    if json_positions:
                        row = list(row)
                        for i in json_positions:
                            if row[i] is not None:
                                row[i] = Jsonb(row[i])
                    copy.write_row(row)
                    copied += 1
        # Temporary tables are never analysed by autovacuum; joins on them need estimates.
        analyze_transient(session, staging)
        return staging, copied

    def copy_frame_into_staging(
        self,
        session: Session,
        frame: pd.DataFrame,
        *,
        columns: Sequence[str],
        extra_columns: Mapping[str, str] | None = None,
    ) -> str:
        """COPY ``frame[columns]`` (and the ``extra_columns``, see :meth:`create_staging`) into
        a new temporary table (vectorised text conversion, see ``copy_csv``); returns the
        staging table's name."""
        staging = self.create_staging(session, columns=columns, extra_columns=extra_columns)
        write_frame(session, staging, frame, [*columns, *(extra_columns or {})])
        analyze_transient(session, staging)
        return staging

    def stream_into_staging(
        self, session: Session, chunks: Iterable[bytes], *, columns: Sequence[str]
    ) -> str:
        """COPY raw ``COPY … TO STDOUT`` text-format chunks (e.g. streamed from another
        database) into a new temporary table with ``columns`` of this table's types."""
        staging = self.create_staging(session, columns=columns)
        with (
            driver_cursor(session) as cursor,
            cursor.copy(
                sql.SQL("COPY {} ({}) FROM STDIN").format(
                    sql.Identifier(staging), sql.SQL(", ").join(map(sql.Identifier, columns))
                )
            ) as copy,
        ):
            for chunk in chunks:
                copy.write(chunk)
        analyze_transient(session, staging)
        return staging
