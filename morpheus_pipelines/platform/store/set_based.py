"""Set-based writes for repositories that handle thousands of rows per call.

``COPY`` the rows into a transaction-scoped temporary table, then one
``INSERT … SELECT … ON CONFLICT … DO UPDATE`` into the real table. Rows whose values are
unchanged are skipped by the ``WHERE … IS DISTINCT FROM`` guard, so a re-run writes nothing
(and leaves no dead tuples) when nothing changed. The session's transaction is used; nothing
is committed here.

The staging tables are ``staging``'s, the ``COPY`` streams ``copying``'s, the planner
settings and ``ANALYZE`` ``planner``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import pandas as pd
from psycopg import sql
from psycopg.errors import UniqueViolation
from sqlalchemy import exists as sql_exists
from sqlalchemy import func, text
from sqlalchemy import select as sql_select
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.base import ModelT, RepositoryError
from morpheus_pipelines.platform.store.copying import (
    copy_into_empty_partition,
    write_frame,
)
from morpheus_pipelines.platform.store.planner import (
    merge_joins,
)
from morpheus_pipelines.platform.store.staging import StagingRepository

__all__ = [
    "SetBasedRepository",
    "StagingRepository",
    "copy_into_empty_partition",
    "merge_joins",
    "transaction_start",
    "write_frame",
    "write_selected",
]


def transaction_start(session: Session) -> datetime:
    """``now()`` of the session's transaction: what an upsert in it stamps, for the rows a
    ``COPY`` writes beside it."""
    return session.scalar(text("SELECT now()"))


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
    as bytes, never parsed: faster than ``INSERT … SELECT``, which writes its rows one at a
    time (docs/performance.md, "A quiet day"). A transaction-level advisory lock per table and
    partition makes a concurrent run of the same partition wait and then take the other path.
    Otherwise one ``INSERT … SELECT … ON CONFLICT DO UPDATE``. Either way ``select`` is planned with
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


class SetBasedRepository(StagingRepository[ModelT]):
    """``BaseRepository`` plus COPY-based bulk methods for concrete high-volume repositories:
    staging tables (``StagingRepository``) merged into the table, and a partition's rows
    written at once."""

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

    def copy_run_if_new(
        self,
        session: Session,
        frame: pd.DataFrame,
        *,
        columns: Sequence[str],
        partition_key: str,
        run_id: str,
        stamped: str,
    ) -> int | None:
        """:meth:`copy_frame_if_new` of one run's rows of a partition: ``partition_key`` and
        ``run_id`` on every row, and the column ``stamped`` set to ``now()`` (the
        transaction's start, the time the upsert a caller falls back to would stamp)."""
        return self.copy_frame_if_new(
            session,
            frame,
            columns=columns,
            constants={
                "partition_key": partition_key,
                "run_id": run_id,
                stamped: transaction_start(session),
            },
        )

    def upsert_run_from_staging(
        self,
        session: Session,
        staging: str,
        *,
        columns: Sequence[str],
        partition_key: str,
        run_id: str,
        stamped: str,
    ) -> int:
        """:meth:`upsert_from_staging` of one run's rows of a partition, keyed by partition and
        tenant: ``partition_key``, and ``run_id`` and ``stamped`` (``now()``) as touch columns,
        so an unchanged row keeps the run and time that last changed it."""
        return self.upsert_from_staging(
            session,
            staging,
            columns=columns,
            conflict_columns=["partition_key", "tenant_id"],
            touch_columns=["run_id", stamped],
            computed={
                "partition_key": sql.Literal(partition_key),
                "run_id": sql.Literal(run_id),
                stamped: sql.SQL("now()"),
            },
        )

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
        statement += _conflict_action(update_columns, compared)
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


def _conflict_action(update_columns: Sequence[str], compared: Sequence[str]) -> sql.Composable:
    """What ``ON CONFLICT … DO`` does: nothing, or update ``update_columns`` where one of
    ``compared`` changed (``IS DISTINCT FROM``: NULLs compare as values)."""
    ident = sql.Identifier
    if not update_columns:
        return sql.SQL("NOTHING")
    action = sql.SQL("UPDATE SET {assignments}").format(
        assignments=sql.SQL(", ").join(
            sql.SQL("{c} = EXCLUDED.{c}").format(c=ident(c)) for c in update_columns
        )
    )
    if compared:
        action += sql.SQL(" WHERE ({old}) IS DISTINCT FROM ({new})").format(
            old=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in compared),
            new=sql.SQL(", ").join(sql.SQL("EXCLUDED.{}").format(ident(c)) for c in compared),
        )
    return action
