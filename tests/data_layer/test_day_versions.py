"""Day-versioned tables (``morpheus_pipelines.platform.store.day_versions``) against the real
server: for random histories of newest days, backfills of older days, re-runs, partial writes
and runs rolled back half-way, every written day answers exactly what a table holding a full
copy of every day would, and a write touches only the keys that changed."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor, get_session
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.platform.store.day_versions import (
    DayVersions,
    copy_day_if_empty,
    finish_day,
    remove_from_day,
    rows_on,
    start_day,
    write_day,
)

# Numbered by ``a`` alone: a change of ``b`` only keeps the version's number.
TABLE = DayVersions(
    versions="dv_versions",
    days="dv_days",
    key="k",
    compared=("a", "b"),
    carried=("run",),
    number="n",
    numbered=("a",),
    number_sequence="dv_numbers",
)
SCHEMA = """
CREATE SEQUENCE dv_numbers;
CREATE TABLE dv_days (partition_key text PRIMARY KEY, complete boolean NOT NULL DEFAULT true);
CREATE TABLE dv_versions (
  k text NOT NULL, valid_from text NOT NULL, valid_to text, a integer, b text, run text NOT NULL,
  n bigint NOT NULL DEFAULT nextval('dv_numbers'),
  PRIMARY KEY (k, valid_from), CHECK (valid_to IS NULL OR valid_to > valid_from));
CREATE VIEW dv AS SELECT d.partition_key, v.k, v.a, v.b, v.run FROM dv_days d
  JOIN dv_versions v ON v.valid_from <= d.partition_key
   AND (v.valid_to IS NULL OR v.valid_to > d.partition_key) WHERE d.complete;
"""
DAYS = [f"2026-11-0{n}" for n in range(1, 7)]
KEYS = ["k1", "k2", "k3", "k4"]

Values = tuple[int | None, str | None]
Day = dict[str, tuple[Values, str]]


@pytest.fixture
def versioned(database_url: str) -> str:
    with psycopg.connect(libpq_url(database_url), autocommit=True) as connection:
        connection.execute(SCHEMA)
    return database_url


def _rows(day: dict[str, Values], run: str) -> sql.Composable:
    if not day:
        return sql.SQL("SELECT NULL::text, NULL::integer, NULL::text, NULL::text WHERE false")
    return sql.SQL("SELECT * FROM (VALUES {}) AS r").format(
        sql.SQL(", ").join(
            sql.SQL("({}::text, {}::integer, {}::text, {}::text)").format(
                sql.Literal(k), sql.Literal(a), sql.Literal(b), sql.Literal(run)
            )
            for k, (a, b) in sorted(day.items())
        )
    )


def _stored(session: Session) -> dict[str, Day]:
    with driver_cursor(session) as cursor:
        days: dict[str, Day] = {
            p: {}
            for (p,) in cursor.execute(
                "SELECT partition_key FROM dv_days WHERE complete"
            ).fetchall()
        }
        for partition_key, k, a, b, run in cursor.execute(
            "SELECT partition_key, k, a, b, run FROM dv"
        ):
            assert k not in days[partition_key], f"{k} twice on {partition_key}"
            days[partition_key][k] = ((a, b), run)
    return days


def _stored_by_day(session: Session, days: list[str]) -> dict[str, Day]:
    """Each day read as ``rows_on`` gives it, as the repositories read it."""
    stored: dict[str, Day] = {}
    with driver_cursor(session) as cursor:
        for day in days:
            cursor.execute(
                sql.SQL("SELECT partition_key, k, a, b, run FROM {}").format(
                    rows_on(TABLE, sql.Literal(day))
                )
            )
            rows = cursor.fetchall()
            assert {partition_key for partition_key, *_ in rows} <= {day}
            stored[day] = {k: ((a, b), run) for _, k, a, b, run in rows}
    return stored


def _versions(session: Session) -> list[tuple]:
    with driver_cursor(session) as cursor:
        return cursor.execute(
            "SELECT k, valid_from, valid_to, a, b, run FROM dv_versions ORDER BY k, valid_from"
        ).fetchall()


def _numbers_naming_two_values(session: Session) -> list[int]:
    """Numbers held by versions with different numbered values: a reader comparing numbers
    would take one for the other."""
    with driver_cursor(session) as cursor:
        return [
            n
            for (n,) in cursor.execute(
                "SELECT n FROM dv_versions GROUP BY n HAVING count(DISTINCT coalesce(a, -1)) > 1"
            )
        ]


@dataclass(frozen=True)
class Write:
    day: str
    rows: dict[str, Values]
    complete: bool
    # Keys a partial write removes from the day (those without a row in ``rows``).
    removed: frozenset[str]
    rolled_back: bool


values = st.tuples(st.none() | st.integers(0, 2), st.none() | st.sampled_from(["x", "y"]))
writes = st.builds(
    Write,
    day=st.sampled_from(DAYS),
    rows=st.dictionaries(st.sampled_from(KEYS), values),
    complete=st.booleans(),
    removed=st.frozensets(st.sampled_from(KEYS)),
    rolled_back=st.integers(0, 4).map(lambda n: n == 0),
)


def _expected_day(history: dict[str, Day], write: Write, run: str) -> Day:
    """What a table with a full copy of every day holds for ``write.day`` after it: a day not
    written yet starts from the newest day before it (what it carries forward)."""
    if write.day in history:
        base = history[write.day]
    else:
        earlier = [d for d in history if d < write.day]
        base = history[max(earlier)] if earlier else {}
    day: Day = {} if write.complete else dict(base)
    for k, vals in write.rows.items():
        old = base.get(k)
        day[k] = old if old is not None and old[0] == vals else (vals, run)
    if not write.complete:
        for k in write.removed - write.rows.keys():
            day.pop(k, None)
    return day


def _write(session: Session, write: Write, run: str) -> int:
    """The write through the module; returns the keys it changed."""
    changed = write_day(
        session, TABLE, day=write.day, rows=_rows(write.rows, run), complete=write.complete
    )
    removed = write.removed - write.rows.keys()
    if not write.complete and removed:
        keys = sql.SQL("SELECT unnest({}::text[])").format(sql.Literal(sorted(removed)))
        changed += remove_from_day(session, TABLE, day=write.day, keys=keys)
    return changed


def _changed(before: Day, after: Day) -> int:
    return sum(1 for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _apply(history: dict[str, Day], versioned: str, write: Write, run: str) -> None:
    base_history = {d: dict(rows) for d, rows in history.items()}
    expected = _expected_day(history, write, run)
    if write.rolled_back:
        # A run that fails after writing: nothing of it stays.
        with pytest.raises(RuntimeError), get_session(versioned) as session:
            _write(session, write, run)
            raise RuntimeError("the run fails")
        with get_session(versioned) as session:
            assert _stored(session) == base_history
        return
    with get_session(versioned) as session:
        changed = _write(session, write, run)
    history[write.day] = expected
    previous = base_history.get(write.day)
    if previous is None:
        earlier = [d for d in base_history if d < write.day]
        previous = base_history[max(earlier)] if earlier else {}
    assert changed == _changed(previous, expected)
    with get_session(versioned) as session:
        assert _stored(session) == history
        assert _stored_by_day(session, sorted(history)) == history
        # A day not written answers nothing.
        assert _stored_by_day(session, ["2026-10-31"]) == {"2026-10-31": {}}
        assert _numbers_naming_two_values(session) == []
        versions = _versions(session)
    # The same write again changes nothing.
    with get_session(versioned) as session:
        assert _write(session, write, f"{run}-again") == 0
    with get_session(versioned) as session:
        assert _versions(session) == versions


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(history=st.lists(writes, min_size=1, max_size=8))
def test_every_day_answers_what_a_full_copy_would(versioned: str, history: list[Write]) -> None:
    with psycopg.connect(libpq_url(versioned), autocommit=True) as connection:
        connection.execute("TRUNCATE dv_days, dv_versions")
    stored: dict[str, Day] = {}
    for number, write in enumerate(history):
        _apply(stored, versioned, write, f"run-{number}")


def test_an_unchanged_day_writes_nothing_and_a_change_two_rows(versioned: str) -> None:
    first = {k: (1, "x") for k in KEYS}
    with get_session(versioned) as session:
        write_day(session, TABLE, day=DAYS[0], rows=_rows(first, "r1"), complete=True)
    with get_session(versioned) as session:
        quiet = write_day(session, TABLE, day=DAYS[1], rows=_rows(first, "r2"), complete=True)
    assert quiet == 0
    with get_session(versioned) as session:
        assert len(_versions(session)) == len(KEYS)
    one_changed = {**first, "k2": (2, "x")}
    with get_session(versioned) as session:
        write_day(session, TABLE, day=DAYS[2], rows=_rows(one_changed, "r3"), complete=True)
        versions = _versions(session)
    # k2's first version ends at the third day and a second one opens there.
    assert [v for v in versions if v[0] == "k2"] == [
        ("k2", DAYS[0], DAYS[2], 1, "x", "r1"),
        ("k2", DAYS[2], None, 2, "x", "r3"),
    ]
    assert len(versions) == len(KEYS) + 1


def test_a_day_written_over_several_transactions_answers_once_finished(versioned: str) -> None:
    """A day started answers nothing until finished, and still bounds the versions another
    day writes meanwhile: a backfill of an older day written while it is unfinished ends
    where it begins, instead of running on through it (two rows of one key there)."""
    with get_session(versioned) as session:
        write_day(session, TABLE, day=DAYS[0], rows=_rows({"k1": (1, "x")}, "r1"), complete=True)
    with get_session(versioned) as session:
        start_day(session, TABLE, day=DAYS[2])
    with get_session(versioned) as session:
        write_day(
            session,
            TABLE,
            day=DAYS[2],
            rows=_rows({"k1": (3, "z")}, "r3"),
            complete=False,
            finishes_day=False,
        )
    with get_session(versioned) as session:
        assert _stored(session) == {DAYS[0]: {"k1": ((1, "x"), "r1")}}
        assert _stored_by_day(session, [DAYS[2]]) == {DAYS[2]: {}}
        write_day(session, TABLE, day=DAYS[1], rows=_rows({"k1": (2, "y")}, "b"), complete=True)
    with get_session(versioned) as session:
        finish_day(session, TABLE, day=DAYS[2])
    with get_session(versioned) as session:
        assert _stored(session) == {
            DAYS[0]: {"k1": ((1, "x"), "r1")},
            DAYS[1]: {"k1": ((2, "y"), "b")},
            DAYS[2]: {"k1": ((3, "z"), "r3")},
        }
        assert _stored_by_day(session, DAYS[:3]) == _stored(session)


def test_a_row_without_a_key_is_refused_and_nothing_is_written(versioned: str) -> None:
    with get_session(versioned) as session:
        write_day(session, TABLE, day=DAYS[0], rows=_rows({"k1": (1, "x")}, "r1"), complete=True)
    keyless = sql.SQL(
        "SELECT * FROM (VALUES ('k2'::text, 2, 'y'::text, 'r2'::text), (NULL, 3, 'z', 'r2')) AS r"
    )
    with (
        pytest.raises(ValueError, match="1 of the rows for 2026-11-02 have no k"),
        get_session(versioned) as session,
    ):
        write_day(session, TABLE, day=DAYS[1], rows=keyless, complete=True)
    with get_session(versioned) as session:
        assert _stored(session) == {DAYS[0]: {"k1": ((1, "x"), "r1")}}


def test_a_backfill_moves_no_other_day(versioned: str) -> None:
    rows = {"k1": (1, "x")}
    for day, run in ((DAYS[0], "r1"), (DAYS[4], "r2")):
        with get_session(versioned) as session:
            write_day(session, TABLE, day=day, rows=_rows(rows, run), complete=True)
    with get_session(versioned) as session:
        write_day(session, TABLE, day=DAYS[2], rows=_rows({"k1": (9, "z")}, "b"), complete=True)
        stored = _stored(session)
        versions = _versions(session)
    # The first day's version ends at the backfilled day and a copy continues from the next.
    assert versions == [
        ("k1", DAYS[0], DAYS[2], 1, "x", "r1"),
        ("k1", DAYS[2], DAYS[4], 9, "z", "b"),
        ("k1", DAYS[4], None, 1, "x", "r1"),
    ]
    # The continuation is its original's copy, number included.
    with get_session(versioned) as session, driver_cursor(session) as cursor:
        numbers = [n for (n,) in cursor.execute("SELECT n FROM dv_versions ORDER BY valid_from")]
    assert numbers[0] == numbers[2] != numbers[1]
    assert stored == {
        DAYS[0]: {"k1": ((1, "x"), "r1")},
        DAYS[2]: {"k1": ((9, "z"), "b")},
        DAYS[4]: {"k1": ((1, "x"), "r1")},
    }


def test_the_first_day_is_copied_straight_in_and_only_the_first(versioned: str) -> None:
    first = {k: (1, "x") for k in KEYS}
    with get_session(versioned) as session, get_session(versioned) as source:
        copied = copy_day_if_empty(
            session, TABLE, day=DAYS[1], rows=_rows(first, "r1"), source=source
        )
    assert copied == len(KEYS)
    with get_session(versioned) as session, get_session(versioned) as source:
        assert (
            copy_day_if_empty(session, TABLE, day=DAYS[2], rows=_rows(first, "r2"), source=source)
            is None
        )
        # Declining registered the day, and it carries the first day's rows.
        assert _stored(session)[DAYS[2]] == {k: ((1, "x"), "r1") for k in KEYS}
    # An older day with nothing valid on it is copied too, up to the next written day.
    with get_session(versioned) as session, get_session(versioned) as source:
        assert (
            copy_day_if_empty(
                session, TABLE, day=DAYS[0], rows=_rows({"k1": (5, "y")}, "r0"), source=source
            )
            == 1
        )
        assert _stored(session)[DAYS[0]] == {"k1": ((5, "y"), "r0")}
        assert _stored(session)[DAYS[1]] == {k: ((1, "x"), "r1") for k in KEYS}


def _waits_on_a_lock(url: str, application_name: str) -> bool:
    with psycopg.connect(libpq_url(url), autocommit=True) as admin:
        row = admin.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE application_name = %s",
            (application_name,),
        ).fetchone()
    return row is not None and row[0] == "Lock"


def test_a_second_writer_waits_for_the_first(versioned: str) -> None:
    """A backfill of an older day written while the newest day's run is still open compares
    against what that run committed. Without the table's lock it would wait only for the row
    both change, then end that row at its own day and open a version overlapping the newest
    day's: that day would answer the key twice."""
    with get_session(versioned) as session:
        write_day(session, TABLE, day=DAYS[0], rows=_rows({"k1": (1, "x")}, "r1"), complete=True)
    errors: list[BaseException] = []

    def backfill() -> None:
        try:
            with get_session(f"{versioned}?application_name=dv-backfill") as session:
                write_day(
                    session, TABLE, day=DAYS[1], rows=_rows({"k1": (2, "y")}, "b"), complete=True
                )
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    with get_session(versioned) as newest:
        write_day(newest, TABLE, day=DAYS[2], rows=_rows({"k1": (3, "z")}, "r3"), complete=True)
        thread = threading.Thread(target=backfill)
        thread.start()
        while not _waits_on_a_lock(versioned, "dv-backfill"):
            assert thread.is_alive() and not errors, errors
    thread.join()
    assert not errors, errors
    with get_session(versioned) as session:
        assert _stored(session) == {
            DAYS[0]: {"k1": ((1, "x"), "r1")},
            DAYS[1]: {"k1": ((2, "y"), "b")},
            DAYS[2]: {"k1": ((3, "z"), "r3")},
        }


def test_a_version_keeps_its_number_while_its_numbered_values_stay(versioned: str) -> None:
    """A change of ``b`` alone is a new version with the old number; a change of ``a`` draws a
    new one, and going back to the old ``a`` draws another (a number is never reused)."""
    days = [({"k1": (1, "x")}, "r1"), ({"k1": (1, "y")}, "r2"), ({"k1": (2, "y")}, "r3")]
    days.append(({"k1": (1, "y")}, "r4"))
    for day, (rows, run) in zip(DAYS, days, strict=False):
        with get_session(versioned) as session:
            write_day(session, TABLE, day=day, rows=_rows(rows, run), complete=True)
    with get_session(versioned) as session, driver_cursor(session) as cursor:
        numbers = [n for (n,) in cursor.execute("SELECT n FROM dv_versions ORDER BY valid_from")]
    assert numbers[0] == numbers[1]
    assert len({numbers[1], numbers[2], numbers[3]}) == 3
