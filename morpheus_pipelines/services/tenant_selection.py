"""Selecting the APAC tenants of one daily partition from the DevOps source (002 §1, §2).

A partition key is a CST (Asia/Shanghai) natural day D. Its candidates are:

* the **active candidates** — current state at run time: region APAC and status not
  ``free_trial``, ``new_user`` or ``closing`` (the unchanged active-candidate SQL; a NULL
  status is excluded by ``NOT IN`` exactly as before);
* the **signups** of day D — region APAC, ``created_at`` in ``[D 00:00, D+1 00:00)`` CST,
  whatever their status.

A tenant in both sets is selected once, with ``source_type = 'signup'``: on its signup day the
fact that it is new is what matters to Sales.

The rows are streamed with ``COPY … TO STDOUT`` from the source database straight into a
warehouse staging table, without being parsed in Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.repositories.bulk import driver_cursor

CST = ZoneInfo("Asia/Shanghai")
EXCLUDED_ACTIVE_STATUSES = ("free_trial", "new_user", "closing")
APAC = "APAC"


def cst_day_bounds(partition_key: str) -> tuple[datetime, datetime]:
    """``[00:00, 24:00)`` of the CST day named by ``partition_key`` (``YYYY-MM-DD``)."""
    day = date.fromisoformat(partition_key)
    start = datetime.combine(day, time(0, 0), tzinfo=CST)
    return start, start + timedelta(days=1)


def active_candidate_predicate() -> sql.Composed:
    return sql.SQL("region = {apac} AND status NOT IN ({excluded})").format(
        apac=sql.Literal(APAC),
        excluded=sql.SQL(", ").join(map(sql.Literal, EXCLUDED_ACTIVE_STATUSES)),
    )


def signup_predicate(start: datetime, end: datetime) -> sql.Composed:
    return sql.SQL("region = {apac} AND created_at >= {start} AND created_at < {end}").format(
        apac=sql.Literal(APAC), start=sql.Literal(start), end=sql.Literal(end)
    )


def candidate_query(schema: str, partition_key: str) -> sql.Composed:
    """One query, one row per selected tenant, columns in ``CANDIDATE_SOURCE_COLUMNS`` order."""
    start, end = cst_day_bounds(partition_key)
    signup = signup_predicate(start, end)
    return sql.SQL(
        "SELECT id, CASE WHEN {signup} THEN 'signup' ELSE 'active' END, custom_id, name, email, "
        "sales_owner_email, status, plan, seats, active_users_30d, created_at, last_active_at "
        "FROM {schema}.tenants WHERE ({active}) OR ({signup}) ORDER BY id"
    ).format(signup=signup, active=active_candidate_predicate(), schema=sql.Identifier(schema))


def stream_candidates(source: Session, schema: str, partition_key: str) -> Iterator[bytes]:
    """The partition's candidates as ``COPY`` text-format chunks from the source database."""
    with (
        driver_cursor(source) as cursor,
        cursor.copy(
            sql.SQL("COPY ({}) TO STDOUT").format(candidate_query(schema, partition_key))
        ) as copy,
    ):
        yield from copy
