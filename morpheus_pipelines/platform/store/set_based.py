"""Set-based writes for repositories that handle thousands of rows per call.

``COPY`` the rows into a transaction-scoped temporary table, then one
``INSERT … SELECT … ON CONFLICT … DO UPDATE`` into the real table. Rows whose values are
unchanged are skipped by the ``WHERE … IS DISTINCT FROM`` guard, so a re-run writes nothing
(and leaves no dead tuples) when nothing changed. The session's transaction is used; nothing
is committed here.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pandas as pd
from psycopg import sql
from psycopg.errors import UniqueViolation
from psycopg.types.json import Jsonb
from sqlalchemy import exists as sql_exists
from sqlalchemy import func
from sqlalchemy import select as sql_select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.base import BaseRepository, ModelT, RepositoryError
from morpheus_pipelines.platform.store.copy_csv import (
    ARROW_TYPES,
    COPY_OPTIONS,
    csv_frame,
    frame_csv,
)

_staging_counter = itertools.count()


def new_staging_name(prefix: str) -> str:
    return f"_stage_{prefix}_{next(_staging_counter)}"


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


# The sample a staging table is analysed with: 3,000 rows instead of PostgreSQL's 30,000.
# A staging table lives for one transaction and is joined on its key: the row count, null
# fractions and the key's distinctness are what its plans need, and the default sample cost
# about 0.25 s per 100,000-row chunk, ten times this one (docs/performance.md).
STAGING_STATISTICS_TARGET = 10


def analyze(session: Session, table: str, *, statistics_target: int | None = None) -> None:
    """Refresh the planner's statistics after a bulk write: autovacuum runs later, and a
    plan made on "empty table" estimates turns an anti-join over 100,000 rows into
    minutes of nested loops. ``statistics_target``: the sample size for this ``ANALYZE``
    only (PostgreSQL's ``default_statistics_target``; None keeps the server's)."""
    settings = (
        {} if statistics_target is None else {"default_statistics_target": str(statistics_target)}
    )
    with local_settings(session, settings), driver_cursor(session) as cursor:
        cursor.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))


def keyset_after(column: str, after: str | None) -> sql.Composable:
    """``AND <column> > after`` for keyset pagination, or nothing on the first page."""
    if after is None:
        return sql.SQL("")
    return sql.SQL("AND {} > {}").format(sql.SQL(column), sql.Literal(after))


def write_selected(
    session: Session,
    *,
    table: str,
    columns: Sequence[str],
    select: sql.Composable,
    conflict_columns: Sequence[str],
    source: Session | None = None,
    partition_key: str | None = None,
) -> int:
    """Write the rows ``select`` gives (in ``columns`` order) into ``table``; returns rows
    written.

    With ``source`` — another connection, which reads committed rows only — and
    ``partition_key``, when ``table`` has no row of that partition yet: the rows are
    streamed ``COPY … TO STDOUT`` from ``source`` into ``COPY … FROM STDIN`` on ``session``,
    as bytes, never parsed. At a million rows that is about twice as fast as
    ``INSERT … SELECT``, which writes its rows one at a time (docs/performance.md, "A quiet
    day"). A transaction-level advisory lock per table and partition makes a concurrent run
    of the same partition wait and then take the other path. Otherwise one
    ``INSERT … SELECT … ON CONFLICT DO UPDATE``. Either way ``select`` is planned with
    :func:`merge_joins`: its callers join one partition of each table on the primary key.
    """
    if source is not None and partition_key is not None:
        with merge_joins(source):
            copied = copy_into_empty_partition(
                session,
                table=table,
                columns=columns,
                select=select,
                source=source,
                partition_key=partition_key,
            )
        if copied is not None:
            return copied
    targets = sql.SQL(", ").join(map(sql.Identifier, columns))
    statement = sql.SQL(
        "INSERT INTO {table} AS t ({targets}) {select} "
        "ON CONFLICT ({conflict}) DO UPDATE SET {assignments}"
    ).format(
        table=sql.Identifier(table),
        targets=targets,
        select=select,
        conflict=sql.SQL(", ").join(map(sql.Identifier, conflict_columns)),
        assignments=sql.SQL(", ").join(
            sql.SQL("{c} = EXCLUDED.{c}").format(c=sql.Identifier(c))
            for c in columns
            if c not in conflict_columns
        ),
    )
    with merge_joins(session), driver_cursor(session) as cursor:
        cursor.execute(statement)
        return max(cursor.rowcount, 0)


@contextmanager
def local_settings(session: Session, settings: Mapping[str, str]) -> Iterator[None]:
    """Run the block with the server ``settings`` set for the session's transaction, then put
    back the values they had. Read and set in one statement each. Transaction-local: on an
    error the rollback undoes them (and the aborted transaction would refuse the restore)."""
    names = list(settings)
    if not names:
        yield
        return

    def set_all(values: Sequence[str]) -> None:
        with driver_cursor(session) as cursor:
            cursor.execute(
                "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in names),
                [item for pair in zip(names, values, strict=True) for item in pair],
            )

    with driver_cursor(session) as cursor:
        cursor.execute("SELECT " + ", ".join("current_setting(%s)" for _ in names), names)
        previous = cursor.fetchone()
    set_all([settings[name] for name in names])
    yield
    set_all(previous)


def merge_joins(session: Session) -> AbstractContextManager[None]:
    """Plan the session's statements inside the block with merge joins only, in one process,
    then restore the planner's settings. For a select that joins one partition of each
    partition-keyed table on their primary keys: every input is read once, in key order, where
    the planner's own choice (index lookups per row, parallel hash joins) took 1.4-1.8 times as
    long. No parallel workers: while the select streams into a ``COPY`` on another connection
    the two cores are already busy, and each worker of a parallel merge join reads every inner
    input again; the serial plan streamed a day of scores 18 % faster (docs/performance.md,
    "A quiet day")."""
    return local_settings(
        session,
        {
            "enable_hashjoin": "off",
            "enable_nestloop": "off",
            "max_parallel_workers_per_gather": "0",
        },
    )


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
    targets = sql.SQL(", ").join(map(sql.Identifier, columns))
    with driver_cursor(session) as writer:
        with writer.copy(
            sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), targets)
        ) as rows_in:
            for chunk in copy_out(source, select):
                rows_in.write(chunk)
        return max(writer.rowcount, 0)


def copy_out(source: Session, select: sql.Composable) -> Iterator[bytes]:
    """The rows of ``select`` on ``source`` as ``COPY … TO STDOUT`` text-format chunks."""
    with (
        driver_cursor(source) as reader,
        reader.copy(sql.SQL("COPY ({}) TO STDOUT").format(select)) as rows_out,
    ):
        yield from rows_out


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


class SetBasedRepository(BaseRepository[ModelT]):
    """``BaseRepository`` plus COPY-based bulk methods for concrete high-volume repositories."""

    def has_partition(self, session: Session, *, partition_key: str) -> bool:
        """Whether the table has any row of the partition (a partition-keyed table)."""
        return bool(
            session.scalar(
                sql_select(sql_exists().where(self.table.c.partition_key == partition_key))
            )
        )

    def newest_partition_before(self, session: Session, *, partition_key: str) -> str | None:
        """The newest partition before ``partition_key`` with rows in the table."""
        column = self.table.c.partition_key
        return session.scalar(sql_select(func.max(column)).where(column < partition_key))

    def write_rows(
        self,
        session: Session,
        *,
        columns: Sequence[str],
        rows: sql.Composable,
        partition_key: str,
        source: Session | None = None,
    ) -> int:
        """:func:`write_selected` into this table, keyed by its primary key."""
        return write_selected(
            session,
            table=self.table.name,
            columns=columns,
            select=rows,
            conflict_columns=[c.name for c in self.table.primary_key.columns],
            source=source,
            partition_key=partition_key,
        )

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
        analyze(session, staging, statistics_target=STAGING_STATISTICS_TARGET)
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
        analyze(session, staging, statistics_target=STAGING_STATISTICS_TARGET)
        return staging

    def copy_frame_if_new(
        self,
        session: Session,
        frame: pd.DataFrame,
        *,
        columns: Sequence[str],
        constants: Mapping[str, Any],
    ) -> int | None:
        """COPY ``frame[columns]``, with each of ``constants`` as a column of that value,
        straight into the table when none of its rows' primary keys is there yet (a
        partition's first run: no staging table, no upsert; docs/performance.md); returns
        rows written. Otherwise None, nothing written and the transaction still usable: a
        savepoint takes back the ``COPY`` that met an existing key, and the caller upserts."""
        self._check_columns([*columns, *constants], "columns")
        rows = frame[list(columns)].assign(**constants)
        with driver_cursor(session) as cursor:
            cursor.execute("SAVEPOINT copy_if_new")
            try:
                write_frame(session, self.table.name, rows, [*columns, *constants])
            except UniqueViolation as error:
                if error.diag.constraint_name != self.table.primary_key.name:
                    raise
                cursor.execute("ROLLBACK TO SAVEPOINT copy_if_new")
                return None
            cursor.execute("RELEASE SAVEPOINT copy_if_new")
        return len(rows)

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
        analyze(session, staging, statistics_target=STAGING_STATISTICS_TARGET)
        return staging

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

    def upsert_from_staging(
        self,
        session: Session,
        staging: str,
        *,
        columns: Sequence[str],
        conflict_columns: Sequence[str],
        update_columns: Sequence[str] | None = None,
        touch_columns: Sequence[str] = (),
        computed: Mapping[str, sql.Composable] | None = None,
    ) -> int:
        """Merge a staging table into the target; returns the number of rows written.

        ``touch_columns`` (e.g. ``run_id``, ``updated_at``) are written with the others but do
        not count as a change on their own, so unchanged rows keep their old values.
        ``computed`` adds target columns whose values are SQL expressions over the staging
        row (aliased ``s``) or constants, e.g. ``{"partition_key": sql.Literal(key)}``.
        """
        computed = dict(computed or {})
        self._check_columns(computed, "computed columns")
        self._check_conflict_columns(conflict_columns)
        if update_columns is None:
            update_columns = [c for c in (*columns, *computed) if c not in conflict_columns]
        self._check_columns(update_columns, "update_columns")
        compared = [c for c in update_columns if c not in touch_columns]
        ident = sql.Identifier
        statement = sql.SQL(
            "INSERT INTO {target} AS t ({targets}) "
            "SELECT {values} FROM {staging} AS s "
            "ON CONFLICT ({conflict}) DO "
        ).format(
            target=ident(self.table.name),
            targets=sql.SQL(", ").join(ident(c) for c in (*columns, *computed)),
            values=sql.SQL(", ").join(
                [sql.SQL("s.{}").format(ident(c)) for c in columns] + list(computed.values())
            ),
            conflict=sql.SQL(", ").join(ident(c) for c in conflict_columns),
            staging=ident(staging),
        )
        if not update_columns:
            statement += sql.SQL("NOTHING")
        else:
            statement += sql.SQL("UPDATE SET {assignments}").format(
                assignments=sql.SQL(", ").join(
                    sql.SQL("{c} = EXCLUDED.{c}").format(c=ident(c)) for c in update_columns
                )
            )
            if compared:
                statement += sql.SQL(" WHERE ({old}) IS DISTINCT FROM ({new})").format(
                    old=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in compared),
                    new=sql.SQL(", ").join(
                        sql.SQL("EXCLUDED.{}").format(ident(c)) for c in compared
                    ),
                )
        with driver_cursor(session) as cursor:
            cursor.execute(statement)
            return max(cursor.rowcount, 0)

    def bulk_upsert(
        self,
        session: Session,
        rows: Iterable[Sequence[Any]],
        *,
        columns: Sequence[str],
        conflict_columns: Sequence[str],
        update_columns: Sequence[str] | None = None,
        touch_columns: Sequence[str] = (),
    ) -> int:
        """COPY + one ``INSERT … ON CONFLICT``: the set-based twin of ``upsert``."""
        if not set(conflict_columns) <= set(columns):
            raise RepositoryError(
                f"bulk_upsert into {self.table.name}: conflict columns "
                f"{list(conflict_columns)} must be among the copied columns"
            )
        self._check_conflict_columns(conflict_columns)
        staging, _ = self.copy_into_staging(session, rows, columns=columns)
        return self.upsert_from_staging(
            session,
            staging,
            columns=columns,
            conflict_columns=conflict_columns,
            update_columns=update_columns,
            touch_columns=touch_columns,
        )
