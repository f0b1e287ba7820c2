"""Repositories of the report tables: the Daily Summary and the Weekly Metrics (docs/reports.md).

Reporting reads ``apac_active_tenants`` only. Every read of a tenant table below is one SQL
statement whose only tenant table is ``apac_active_tenants``; ``apac_sales_owned_tenants`` is
never named, so Sales-owned tenants cannot reach a report whatever their priority. The
statements are module constants so a test can check them, and the test suite also renames the
Sales-owned table away and runs both report assets to prove it at run time.

Writes replace one partition's (or one week's) rows with the given rows: COPY into staging,
``INSERT … ON CONFLICT DO UPDATE`` of changed rows only (``run_id`` is a touch column), then
``DELETE`` of the partition's rows that are no longer in the set. Re-running on unchanged
input therefore leaves the rows identical, ``run_id`` included.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pandas as pd
from psycopg import sql
from sqlalchemy import bindparam, text
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.copying import frame_records
from morpheus_pipelines.platform.store.grouping import counts_by_dimension
from morpheus_pipelines.platform.store.set_based import SetBasedRepository
from morpheus_pipelines.tenants.reports.figures import SUMMARY_TENANT_COLUMNS, ActiveTenantFigures
from morpheus_pipelines.tenants.store.models import (
    DailySummaryMetric,
    DailySummaryTenant,
    WeeklyMetric,
)

TOP_PRIORITIES = ("P0", "P1")

# -- reads of apac_active_tenants (the only tenant table reporting may read) -------------------

# What Sales hears about on the partition's day (retired tenants never): a P0/P1 priority that
# is new (no previous priority) or changed; a downgrade out of P0/P1; and a tenant that entered
# Active from Sales-owned carrying a P0/P1 (its priority did not change, so it would otherwise
# be invisible). Scoring writes previous_priority and priority_changed_partition; routing writes
# bucket_entered_partition and entered_from.
CHANGED_TOP_PRIORITIES_SQL = """
SELECT tenant_id, name, priority, previous_priority,
       CASE WHEN priority_changed_partition IS DISTINCT FROM :partition_key THEN 'entered'
            WHEN previous_priority IS NULL THEN 'new'
            WHEN priority NOT IN ('P0', 'P1') THEN 'downgraded'
            ELSE 'changed' END AS change,
       COALESCE(priority_reason, 'unknown') AS reason,
       hubspot_match_method, hubspot_company_id, total_score
FROM apac_active_tenants
WHERE retired_at IS NULL AND priority IS NOT NULL AND (
      (priority_changed_partition = :partition_key
       AND (priority IN ('P0', 'P1') OR previous_priority IN ('P0', 'P1')))
   OR (bucket_entered_partition = :partition_key AND entered_from = 'sales_owned'
       AND priority IN ('P0', 'P1')))
ORDER BY priority, total_score DESC NULLS LAST, tenant_id
"""

# Every count of the Daily Summary in one scan of the table (one statement per figure took
# seven scans; docs/decisions/0034), grouped by the six dimensions at once: a plain GROUP BY
# is aggregated by the parallel workers, where GROUPING SETS (a set per figure) are aggregated
# in one process (docs/decisions/0069). Each figure sums the groups by its own dimension; a
# row outside that figure's condition is NULL there and is not counted in it:
#   priority         Active tenants per final priority now ('unscored' for no priority yet)
#   reason           per priority reason (hubspot_target_account, score)
#   match_method     how the HubSpot target accounts were matched ('none' for the rest)
#   entered          tenants that entered the table on the day: 'new' or 'sales_owned'
#   priority_change  priority changes of the day, 'P2->P1' (new priorities excluded)
#   retired          tenants retired on the day (no longer selected): they leave the others
# ``latest`` gives the latest partition that changed the table: when it is later than the
# partition reported, the table no longer shows that day's state (a late re-run).
ACTIVE_FIGURES_SQL = """
SELECT priority, reason, match_method, entered, priority_change, retired, count(*) AS n,
       GREATEST(max(partition_key), max(priority_changed_partition)) AS latest
FROM (
  SELECT partition_key, priority_changed_partition,
    CASE WHEN retired_at IS NULL THEN COALESCE(priority, 'unscored') END AS priority,
    CASE WHEN retired_at IS NULL THEN COALESCE(priority_reason, 'unscored') END AS reason,
    CASE WHEN retired_at IS NULL THEN COALESCE(hubspot_match_method, 'none') END
      AS match_method,
    CASE WHEN retired_at IS NULL AND bucket_entered_partition = :partition_key
         THEN COALESCE(entered_from, 'unknown') END AS entered,
    CASE WHEN retired_at IS NULL AND priority_changed_partition = :partition_key
         AND previous_priority IS NOT NULL
         THEN previous_priority || '->' || COALESCE(priority, 'unscored') END AS priority_change,
    CASE WHEN retired_at IS NOT NULL AND partition_key = :partition_key
         THEN 'all' END AS retired
  FROM apac_active_tenants
) AS active
GROUP BY priority, reason, match_method, entered, priority_change, retired
"""

# The count figures of ActiveTenantFigures, in the order of ACTIVE_FIGURES_SQL's dimensions.
ACTIVE_FIGURE_COUNTS = (
    "priority_counts",
    "reason_counts",
    "match_method_counts",
    "entered_counts",
    "transitions",
    "retired",
)

ACTIVE_TENANT_QUERIES = (CHANGED_TOP_PRIORITIES_SQL, ACTIVE_FIGURES_SQL)

METRIC_COLUMNS = ("metric", "dimension", "value")
WEEKLY_COLUMNS = ("day", "metric", "dimension", "value", "days_with_data")


def _replace(
    repository: SetBasedRepository,
    session: Session,
    records: Iterable[Sequence[Any]],
    *,
    columns: Sequence[str],
    scope_column: str,
    scope_value: str,
    row_key: Sequence[str],
    run_id: str,
) -> int:
    """Make the rows of ``scope_column = scope_value`` exactly ``records`` (tuples in
    ``columns`` order, consumed as they come); returns rows inserted, updated or deleted (0 on
    a re-run over unchanged input)."""
    staging, _ = repository.copy_into_staging(session, records, columns=columns)
    written = repository.upsert_from_staging(
        session,
        staging,
        columns=columns,
        conflict_columns=[scope_column, *row_key],
        touch_columns=["run_id"],
        computed={scope_column: sql.Literal(scope_value), "run_id": sql.Literal(run_id)},
    )
    with driver_cursor(session) as cursor:
        cursor.execute(
            sql.SQL(
                "DELETE FROM {target} t WHERE t.{scope} = {value} AND NOT EXISTS "
                "(SELECT 1 FROM {staging} s WHERE {match})"
            ).format(
                target=sql.Identifier(repository.table.name),
                scope=sql.Identifier(scope_column),
                value=sql.Literal(scope_value),
                staging=sql.Identifier(staging),
                match=sql.SQL(" AND ").join(
                    sql.SQL("s.{c} = t.{c}").format(c=sql.Identifier(c)) for c in row_key
                ),
            )
        )
        return written + max(cursor.rowcount, 0)


class DailySummaryMetricRepository(SetBasedRepository[DailySummaryMetric]):
    model_class = DailySummaryMetric


class DailySummaryRepository(SetBasedRepository[DailySummaryTenant]):
    """``apac_daily_summary_tenants`` and ``apac_daily_summary_metrics``, plus the reads of
    ``apac_active_tenants`` the Daily Summary is built from."""

    model_class = DailySummaryTenant
    metrics = DailySummaryMetricRepository()

    # -- reads of apac_active_tenants ---------------------------------------------------------

    def begin_consistent_read(self, session: Session) -> None:
        """Make the rest of the caller's transaction one consistent, read-only view, so the
        figures of one summary agree even while scoring commits. Must be the transaction's
        first statement."""
        session.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"))

    def changed_top_priorities(
        self, session: Session, *, partition_key: str, chunk_size: int = 10_000
    ) -> Iterator[pd.DataFrame]:
        """Active P0/P1 tenants that are new or changed priority on the partition's day, with
        the evidence of why (``SUMMARY_TENANT_COLUMNS``), highest priority and score first:
        chunks of ``chunk_size`` rows from a server-side cursor, so a day that lists every
        tenant (the first) is read in bounded memory."""
        result = session.execute(
            text(CHANGED_TOP_PRIORITIES_SQL),
            {"partition_key": partition_key},
            execution_options={"stream_results": True, "max_row_buffer": chunk_size},
        )
        for rows in result.partitions(chunk_size):
            yield pd.DataFrame(rows, columns=list(SUMMARY_TENANT_COLUMNS))

    def active_figures(self, session: Session, *, partition_key: str) -> ActiveTenantFigures:
        """The counts of the Daily Summary of ``partition_key`` as the table stands now, from
        one scan (``ACTIVE_FIGURES_SQL``): per priority, reason and match method; what
        entered, changed priority and retired on the day; and the latest partition that
        changed the table (None when it is empty)."""
        rows = session.execute(text(ACTIVE_FIGURES_SQL), {"partition_key": partition_key}).all()
        counts = counts_by_dimension(
            ((dimensions, n) for *dimensions, n, _ in rows), ACTIVE_FIGURE_COUNTS
        )
        latest = max((row[-1] for row in rows if row[-1] is not None), default=None)
        return ActiveTenantFigures(**counts, state_partition=latest)

    def has_partition(self, session: Session, *, partition_key: str) -> bool:
        """Whether a Daily Summary of the partition is stored."""
        return bool(
            session.scalar(
                text(
                    "SELECT EXISTS (SELECT 1 FROM apac_daily_summary_metrics "
                    "WHERE partition_key = :p)"
                ),
                {"p": partition_key},
            )
        )

    # -- report tables ------------------------------------------------------------------------

    def replace_partition(
        self,
        session: Session,
        records: Iterable[Sequence[Any]],
        *,
        partition_key: str,
        run_id: str,
    ) -> int:
        """Make the partition's summary tenants exactly ``records`` (tuples in
        ``SUMMARY_TENANT_COLUMNS`` order, streamed into staging as they come)."""
        return _replace(
            self,
            session,
            records,
            columns=SUMMARY_TENANT_COLUMNS,
            scope_column="partition_key",
            scope_value=partition_key,
            row_key=["tenant_id"],
            run_id=run_id,
        )

    def replace_metrics(
        self, session: Session, rows: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> int:
        """Make the partition's metrics exactly ``rows`` (``metric, dimension, value``)."""
        return _replace(
            self.metrics,
            session,
            frame_records(rows, METRIC_COLUMNS),
            columns=METRIC_COLUMNS,
            scope_column="partition_key",
            scope_value=partition_key,
            row_key=["metric", "dimension"],
            run_id=run_id,
        )

    def load_partition(self, session: Session, *, partition_key: str) -> pd.DataFrame:
        """The stored summary tenants of one partition, in report order."""
        result = session.execute(
            text(
                "SELECT partition_key, tenant_id, name, priority, previous_priority, change, "
                "reason, hubspot_match_method, hubspot_company_id, total_score, run_id "
                "FROM apac_daily_summary_tenants WHERE partition_key = :p "
                "ORDER BY priority, total_score DESC NULLS LAST, tenant_id"
            ),
            {"p": partition_key},
        )
        return pd.DataFrame(result.fetchall(), columns=list(result.keys()))

    def metrics_for_partitions(
        self, session: Session, partition_keys: Sequence[str]
    ) -> pd.DataFrame:
        """Stored daily metrics of the given partitions: ``partition_key, metric, dimension,
        value`` (value as float). Partitions never summarised have no rows."""
        statement = text(
            "SELECT partition_key, metric, dimension, value FROM apac_daily_summary_metrics "
            "WHERE partition_key IN :keys ORDER BY partition_key, metric, dimension"
        ).bindparams(bindparam("keys", expanding=True))
        rows = (
            session.execute(statement, {"keys": list(partition_keys)}).all()
            if partition_keys
            else []
        )
        frame = pd.DataFrame(rows, columns=["partition_key", "metric", "dimension", "value"])
        frame["value"] = frame["value"].astype(float)
        return frame


class WeeklyMetricsRepository(SetBasedRepository[WeeklyMetric]):
    """``apac_weekly_metrics``: one row per week, day, metric and dimension."""

    model_class = WeeklyMetric

    def replace_week(
        self, session: Session, rows: pd.DataFrame, *, week_key: str, run_id: str
    ) -> int:
        """Make the week's rows exactly ``rows`` (``WEEKLY_COLUMNS``)."""
        return _replace(
            self,
            session,
            frame_records(rows, WEEKLY_COLUMNS),
            columns=WEEKLY_COLUMNS,
            scope_column="week_key",
            scope_value=week_key,
            row_key=["day", "metric", "dimension"],
            run_id=run_id,
        )

    def load_week(self, session: Session, *, week_key: str) -> pd.DataFrame:
        """The stored rows of one week (``week_key`` plus ``WEEKLY_COLUMNS`` and ``run_id``)."""
        result = session.execute(
            text(
                "SELECT week_key, day, metric, dimension, value, days_with_data, run_id "
                "FROM apac_weekly_metrics WHERE week_key = :w ORDER BY day, metric, dimension"
            ),
            {"w": week_key},
        )
        return pd.DataFrame(result.fetchall(), columns=list(result.keys()))

    def days_with_data(self, session: Session, *, week_key: str) -> int:
        """How many of the week's days had a Daily Summary (0 when the week is unknown)."""
        value = session.scalar(
            text("SELECT max(days_with_data) FROM apac_weekly_metrics WHERE week_key = :w"),
            {"w": week_key},
        )
        return int(value or 0)
