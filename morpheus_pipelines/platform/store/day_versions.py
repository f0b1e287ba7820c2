"""Rows valid for a range of days: a day-partitioned table that stores a change once, not a
copy of every unchanged row every day.

A day-versioned table keeps, for each key (a tenant), *versions* valid from one day up to —
not including — another, ``[valid_from, valid_to)`` with ``valid_to`` NULL while open, as
slowly-changing-dimension tables and dbt snapshots keep them. A second table lists the days
written, and whether each is complete. A view joins the two into the rows of every complete
day under the name and columns of a per-day table, so a reader asks for ``partition_key = P``
and gets one row per key valid on day P.

Writing day P (:func:`write_day`) compares the day's rows with the versions valid on P and
writes only the difference:

* an unchanged key: nothing;
* a changed or removed key: its version valid on P ends at P (or is deleted when it starts
  at P: a re-run); when that version was also valid on the next written day, a copy of it
  continues from that day, so no other day's rows move (a backfill of an older day);
* a changed or new key: a version from P up to the next written day, open on the newest.

So re-running a day over the same rows writes nothing, and every written day keeps answering
what was last written for it. Everything happens in the caller's transaction, under a
transaction-level advisory lock per table: the next written day and the versions valid on P
must not move while a write compares against them.

Hand-written: PostgreSQL has no range-valid storage of its own (SQL:2011 system versioning is
keyed by transaction time, not by the day a row belongs to, and PostgreSQL does not have it),
and the libraries that keep slowly-changing dimensions are warehouse tools (dbt snapshots),
not something a repository can call inside its transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import Cursor, sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.copying import stream_copy


@dataclass(frozen=True)
class DayVersions:
    """One day-versioned table: where its versions and its written days are, and which
    columns make a change."""

    # The table of versions: ``key``, ``valid_from``, ``valid_to`` and the columns below.
    versions: str
    # The days written, one ``partition_key`` each: what the view answers.
    days: str
    key: str
    # A change in any of these opens a new version.
    compared: tuple[str, ...]
    # Written with a new version but no change on their own (the run that wrote it).
    carried: tuple[str, ...] = ()
    # A column numbering the versions' contents: a version takes a new number from
    # ``number_sequence`` (the column's default) unless its ``numbered`` columns equal those
    # of the version it replaces on its day, whose number it keeps; a continuation keeps its
    # original's. So two versions with one number hold the same ``numbered`` values, and a
    # reader can compare numbers instead of contents. Read with a day's rows, never written
    # by them.
    number: str | None = None
    numbered: tuple[str, ...] = ()
    number_sequence: str | None = None

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns a day's rows are written with, in this order."""
        return (self.key, *self.compared, *self.carried)

    @property
    def read_columns(self) -> tuple[str, ...]:
        """The columns a day's rows are read with: :attr:`columns` and the number."""
        return (*self.columns, self.number) if self.number else self.columns


def _identifiers(names: tuple[str, ...] | list[str], prefix: str = "") -> sql.Composable:
    return sql.SQL(", ").join(
        sql.SQL(prefix) + sql.Identifier(name) if prefix else sql.Identifier(name) for name in names
    )


def valid_on(alias: str, day: sql.Composable) -> sql.Composable:
    """SQL true when version ``alias`` is valid on ``day``."""
    return sql.SQL("{a}.valid_from <= {d} AND ({a}.valid_to IS NULL OR {a}.valid_to > {d})").format(
        a=sql.Identifier(alias), d=day
    )


def rows_on(table: DayVersions, day: sql.Composable, *, unfinished: bool = False) -> sql.Composable:
    """Day ``day``'s rows of ``table`` as a parenthesised subquery: ``partition_key`` and the
    table's :attr:`~DayVersions.read_columns`, what its view answers for that day (and the
    number). ``day`` is a literal or a bound parameter (``sql.SQL(":p")`` in SQLAlchemy's
    ``text``). The view joins the versions to the days, and a day's range test against a
    joined column costs a nested loop per version;
    here the day is a constant, and reading it is one filtered scan of the versions, or one
    index range scan for a page of keys (docs/decisions/0057 measures both).
    ``unfinished``: also while the day is being written (:func:`start_day`), for its
    writer."""
    answered = sql.SQL("") if unfinished else sql.SQL(" AND complete")
    return sql.SQL(
        "(SELECT CAST({day} AS text) AS partition_key, {columns} FROM {versions} v "
        "WHERE {valid} AND EXISTS (SELECT FROM {days} WHERE partition_key = {day}{answered}))"
    ).format(
        day=day,
        columns=_identifiers(table.read_columns, "v."),
        versions=sql.Identifier(table.versions),
        valid=valid_on("v", day),
        days=sql.Identifier(table.days),
        answered=answered,
    )


def open_day(
    session: Session, table: DayVersions, *, day: str, complete: bool = True
) -> str | None:
    """Lock ``table`` for the rest of the transaction, add ``day`` to its days, and return
    the next day after it (None when ``day`` is the newest). ``complete`` False: the day is
    being written over several transactions and answers nothing until :func:`finish_day`;
    it still bounds the versions other days write, so none of theirs overlaps its own."""
    with driver_cursor(session) as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"day_versions:{table.versions}",),
        )
        cursor.execute(
            sql.SQL(
                "INSERT INTO {days} (partition_key, complete) VALUES (%s, %s) "
                "ON CONFLICT (partition_key) DO UPDATE SET complete = EXCLUDED.complete "
                "WHERE {days}.complete IS DISTINCT FROM EXCLUDED.complete"
            ).format(days=sql.Identifier(table.days)),
            (day, complete),
        )
        cursor.execute(
            sql.SQL("SELECT min(partition_key) FROM {days} WHERE partition_key > %s").format(
                days=sql.Identifier(table.days)
            ),
            (day,),
        )
        return cursor.fetchone()[0]


def start_day(session: Session, table: DayVersions, *, day: str) -> str | None:
    """Begin writing ``day`` over several transactions: until :func:`finish_day` it answers
    nothing (a re-run's earlier rows included), so a run that stops half-way never leaves a
    day whose unwritten keys show what an earlier day or run had. Returns the next written
    day, as :func:`open_day` does."""
    return open_day(session, table, day=day, complete=False)


def finish_day(session: Session, table: DayVersions, *, day: str) -> None:
    """Make what was written for ``day`` since :func:`start_day` the day's rows."""
    open_day(session, table, day=day, complete=True)


def copy_day_if_empty(
    session: Session,
    table: DayVersions,
    *,
    day: str,
    rows: sql.Composable,
    source: Session | None,
) -> int | None:
    """When no version is valid on ``day`` (the table's first day, every key new), write the
    rows of ``rows`` (in ``table.columns`` order) straight into the versions and return rows
    written; otherwise None and nothing written (:func:`write_day` then compares them).
    ``rows`` run on ``source``, which may be another database, and are streamed as bytes,
    never parsed; with ``source`` None they run on ``session`` and are inserted in place."""
    following = open_day(session, table, day=day)
    with driver_cursor(session) as cursor:
        cursor.execute(
            sql.SQL("SELECT NOT EXISTS (SELECT 1 FROM {versions} v WHERE {valid})").format(
                versions=sql.Identifier(table.versions), valid=valid_on("v", sql.Literal(day))
            )
        )
        if not cursor.fetchone()[0]:
            return None
    bounded = sql.SQL("SELECT r.*, {day}::text, {following}::text FROM ({rows}) AS r").format(
        day=sql.Literal(day), following=sql.Literal(following), rows=rows
    )
    columns = [*table.columns, "valid_from", "valid_to"]
    if source is not None:
        return stream_copy(
            session, table=table.versions, columns=columns, select=bounded, source=source
        )
    with driver_cursor(session) as cursor:
        cursor.execute(
            sql.SQL("INSERT INTO {versions} ({columns}) {bounded}").format(
                versions=sql.Identifier(table.versions),
                columns=_identifiers(columns),
                bounded=bounded,
            )
        )
        return max(cursor.rowcount, 0)


def write_day(
    session: Session,
    table: DayVersions,
    *,
    day: str,
    rows: sql.Composable,
    complete: bool,
    finishes_day: bool = True,
) -> int:
    """Make ``day``'s rows of ``table`` those of ``rows`` (a query on ``session`` giving
    ``table.columns`` in order, one row per key), writing only what differs from the versions
    valid on the day. ``complete``: ``rows`` are the whole day, and a key without a row is
    removed from it; otherwise only the keys in ``rows`` are written. Returns the keys whose
    row of the day changed (new, changed and removed). ``finishes_day`` False: part of a day
    written since :func:`start_day`, still answering nothing."""
    following = open_day(session, table, day=day, complete=finishes_day)
    key = sql.Identifier(table.key)
    d = sql.Literal(day)
    names = list(table.columns)
    changes = _changes(table)
    versions = sql.Identifier(table.versions)
    with driver_cursor(session) as cursor:
        cursor.execute(
            sql.SQL(
                "CREATE TEMP TABLE {changes} ON COMMIT DROP AS "
                "SELECT coalesce(n.{key}, o.{key}) AS day_key, o.valid_from AS old_from, "
                "(o.{key} IS NOT NULL AND {continues}) AS old_continues, "
                "n.{key} IS NOT NULL AS present, {numbering}{new_columns} "
                "FROM ({rows}) AS n ({names}) {join} "
                "(SELECT * FROM {versions} v WHERE {valid}) AS o ON o.{key} = n.{key} "
                "WHERE o.{key} IS NULL OR n.{key} IS NULL "
                "OR ({new_compared}) IS DISTINCT FROM ({old_compared})"
            ).format(
                changes=changes,
                key=key,
                continues=_continues_past("o", following),
                numbering=_numbering(table, "n"),
                new_columns=sql.SQL(", ").join(
                    sql.SQL("n.{c} AS {c}").format(c=sql.Identifier(c))
                    for c in names
                    if c != table.key
                ),
                rows=rows,
                names=_identifiers(names),
                join=sql.SQL("FULL JOIN" if complete else "LEFT JOIN"),
                versions=versions,
                valid=valid_on("v", d),
                new_compared=_row(table.compared, "n"),
                old_compared=_row(table.compared, "o"),
            )
        )
        changed = max(cursor.rowcount, 0)
        # A row without a key would match nothing and be dropped without a word.
        cursor.execute(
            sql.SQL("SELECT count(*) FROM {changes} WHERE day_key IS NULL").format(changes=changes)
        )
        keyless = cursor.fetchone()[0]
        if keyless:
            raise ValueError(
                f"{table.versions}: {keyless} of the rows for {day} have no {table.key}; "
                "nothing of the day was written"
            )
        _apply_changes(cursor, table, changes, day=day, following=following)
    return changed


def write_days_from(
    session: Session, table: DayVersions, *, rows_table: str, days: list[str]
) -> None:
    """Write ``days`` of ``table``, oldest first, each from its rows in ``rows_table`` (one
    row per key and ``partition_key``, with ``table.columns``): how a table with a copy of
    every day moves into versions. Each day writes only what differs from the day before, so
    equal rows of consecutive days become one version (the first day's carried columns
    kept); a day without rows removes every key from it."""
    for day in sorted(days):
        rows = sql.SQL("SELECT {columns} FROM {rows_table} WHERE partition_key = {day}").format(
            columns=_identifiers(table.columns),
            rows_table=sql.Identifier(rows_table),
            day=sql.Literal(day),
        )
        write_day(session, table, day=day, rows=rows, complete=True)


def remove_from_day(
    session: Session,
    table: DayVersions,
    *,
    day: str,
    keys: sql.Composable,
    finishes_day: bool = True,
) -> int:
    """Remove the keys ``keys`` gives (a query on ``session``) from ``day``'s rows, leaving
    every other day's as they are; returns the keys removed (those with a row that day).
    ``finishes_day`` as for :func:`write_day`."""
    following = open_day(session, table, day=day, complete=finishes_day)
    changes = _changes(table)
    key = sql.Identifier(table.key)
    with driver_cursor(session) as cursor:
        cursor.execute(
            sql.SQL(
                "CREATE TEMP TABLE {changes} ON COMMIT DROP AS "
                "SELECT o.{key} AS day_key, o.valid_from AS old_from, "
                "{continues} AS old_continues, "
                "false AS present, {numbering}{old_columns} FROM {versions} o "
                "WHERE {valid} AND o.{key} IN ({keys})"
            ).format(
                changes=changes,
                key=key,
                continues=_continues_past("o", following),
                numbering=_numbering(table, None),
                old_columns=_identifiers(table.columns[1:], "o."),
                versions=sql.Identifier(table.versions),
                valid=valid_on("o", sql.Literal(day)),
                keys=keys,
            )
        )
        removed = max(cursor.rowcount, 0)
        _apply_changes(cursor, table, changes, day=day, following=following)
    return removed


def _apply_changes(
    cursor: Cursor, table: DayVersions, changes: sql.Identifier, *, day: str, following: str | None
) -> None:
    """Write the day's changes listed in ``changes`` (each key's version valid on the day,
    whether it continues past the next written day, and its new row when ``present``)."""
    key = sql.Identifier(table.key)
    d = sql.Literal(day)
    nxt = sql.Literal(following)
    names = list(table.columns)
    versions = sql.Identifier(table.versions)
    # A continuation is its original's copy, number included; a new version keeps the
    # number of the one it replaces when its numbered columns are the same.
    kept = [*names[1:], table.number] if table.number else names[1:]
    if following is not None:
        cursor.execute(
            sql.SQL(
                "INSERT INTO {versions} ({key}, valid_from, valid_to, {values}) "
                "SELECT v.{key}, {nxt}, v.valid_to, {old_values} FROM {versions} v "
                "JOIN {changes} c ON c.day_key = v.{key} AND c.old_from = v.valid_from "
                "WHERE c.old_continues"
            ).format(
                versions=versions,
                key=key,
                values=_identifiers(kept),
                nxt=nxt,
                old_values=_identifiers(kept, "v."),
                changes=changes,
            )
        )
    cursor.execute(
        sql.SQL(
            "DELETE FROM {versions} v USING {changes} c "
            "WHERE c.day_key = v.{key} AND c.old_from = v.valid_from AND v.valid_from = {d}"
        ).format(versions=versions, changes=changes, key=key, d=d)
    )
    cursor.execute(
        sql.SQL(
            "UPDATE {versions} v SET valid_to = {d} FROM {changes} c "
            "WHERE c.day_key = v.{key} AND c.old_from = v.valid_from AND v.valid_from < {d}"
        ).format(versions=versions, changes=changes, key=key, d=d)
    )
    new_values = _identifiers(names[1:], "c.")
    if table.number:
        new_values = sql.SQL(
            "{values}, CASE WHEN c.keeps_number THEN c.old_number ELSE nextval({sequence}) END"
        ).format(values=new_values, sequence=sql.Literal(table.number_sequence))
    cursor.execute(
        sql.SQL(
            "INSERT INTO {versions} ({key}, valid_from, valid_to, {values}) "
            "SELECT c.day_key, {d}, {nxt}, {new_values} FROM {changes} c WHERE c.present"
        ).format(
            versions=versions,
            key=key,
            values=_identifiers(kept),
            d=d,
            nxt=nxt,
            new_values=new_values,
            changes=changes,
        )
    )
    cursor.execute(sql.SQL("DROP TABLE {changes}").format(changes=changes))


def _numbering(table: DayVersions, new: str | None) -> sql.Composable:
    """The changes' ``old_number`` and ``keeps_number`` columns (followed by a comma) for a
    numbered table: whether the new row ``new`` (None: no new row) has the numbered values
    of the version ``o`` it replaces."""
    if not table.number:
        return sql.SQL("")
    if new is None:
        keeps = sql.SQL("false")
    else:
        keeps = sql.SQL(
            "(o.{key} IS NOT NULL AND {n}.{key} IS NOT NULL "
            "AND {new_values} IS NOT DISTINCT FROM {old_values})"
        ).format(
            key=sql.Identifier(table.key),
            n=sql.Identifier(new),
            new_values=_row(table.numbered, new),
            old_values=_row(table.numbered, "o"),
        )
    return sql.SQL("o.{number} AS old_number, {keeps} AS keeps_number, ").format(
        number=sql.Identifier(table.number), keeps=keeps
    )


def _changes(table: DayVersions) -> sql.Identifier:
    """The transaction's temporary list of a day's changes to ``table``."""
    return sql.Identifier(f"day_changes_{table.versions}")


def _continues_past(alias: str, following: str | None) -> sql.Composable:
    """SQL true when version ``alias`` is also valid on ``following``, the next written day
    (false when there is none)."""
    if following is None:
        return sql.SQL("false")
    return sql.SQL("({a}.valid_to IS NULL OR {a}.valid_to > {nxt})").format(
        a=sql.Identifier(alias), nxt=sql.Literal(following)
    )


def _row(columns: tuple[str, ...], alias: str) -> sql.Composable:
    # ROW(...) so that a single compared column still compares as a row.
    return sql.SQL("ROW({})").format(_identifiers(columns, f"{alias}."))
