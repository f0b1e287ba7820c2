"""Repository of score history (``apac_tenant_score_snapshots``) and the scoring reads/writes
across the two bucket tables."""

from __future__ import annotations

import pandas as pd
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.models import TenantScoreSnapshot
from morpheus_pipelines.repositories.bulk import (
    SetBasedRepository,
    driver_cursor,
    keyset_after,
    read_frame,
)
from morpheus_pipelines.repositories.tenant_bucket import BUCKET_TABLES

SNAPSHOT_COLUMNS = (
    "tenant_id",
    "tenant_bucket",
    "score_model_version",
    "total_score",
    "calculated_priority",
    "priority",
    "priority_reason",
    "contributions",
)
SCORE_COLUMNS = ("total_score", "calculated_priority", "priority", "priority_reason")


class TenantScoreSnapshotRepository(SetBasedRepository[TenantScoreSnapshot]):
    model_class = TenantScoreSnapshot

    def read_scoring_input(
        self, session: Session, *, partition_key: str, after: str | None, limit: int
    ) -> pd.DataFrame:
        """Up to ``limit`` of the partition's routed tenants after ``after``, with the routing
        message (bucket, override, reason) and the signals of their bucket row. The forced
        Sales-owned ids and rejected rows are not scoring input."""
        query = sql.SQL(
            "SELECT d.tenant_id, d.tenant_bucket, d.priority_override, d.priority_reason, "
            "coalesce(a.plan, s.plan) AS plan, coalesce(a.seats, s.seats) AS seats, "
            "coalesce(a.active_users_30d, s.active_users_30d) AS active_users_30d, "
            "coalesce(a.last_active_at, s.last_active_at) AS last_active_at, "
            "coalesce(a.employee_count, s.employee_count) AS employee_count, "
            "coalesce(a.country, s.country) AS country, "
            "coalesce(a.industry, s.industry) AS industry "
            "FROM apac_routing_decisions d "
            "LEFT JOIN apac_active_tenants a "
            "ON a.tenant_id = d.tenant_id AND d.tenant_bucket = 'active' "
            "LEFT JOIN apac_sales_owned_tenants s "
            "ON s.tenant_id = d.tenant_id AND d.tenant_bucket = 'sales_owned' "
            "WHERE d.partition_key = {p} AND d.rejection_reason IS NULL "
            "AND d.routing_rule <> 'forced_sales_owned' {after} "
            "ORDER BY d.tenant_id LIMIT {n}"
        ).format(
            p=sql.Literal(partition_key),
            after=keyset_after("d.tenant_id", after),
            n=sql.Literal(limit),
        )
        return read_frame(session, query)

    def write_scores(
        self, session: Session, scores: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> dict[str, int]:
        """Record the snapshots and update the score columns of each bucket row.

        A bucket row is rewritten only when its score or priority changed; a priority change
        keeps the old value in ``previous_priority`` and the partition in
        ``priority_changed_partition`` (what the Daily Summary reports as new or changed).
        """
        staging = self.copy_frame_into_staging(session, scores, columns=SNAPSHOT_COLUMNS)
        written = {
            "snapshots": self.upsert_from_staging(
                session,
                staging,
                columns=SNAPSHOT_COLUMNS,
                conflict_columns=["partition_key", "tenant_id"],
                touch_columns=["run_id", "scored_at"],
                computed={
                    "partition_key": sql.Literal(partition_key),
                    "run_id": sql.Literal(run_id),
                    "scored_at": sql.SQL("now()"),
                },
            )
        }
        for bucket, table in BUCKET_TABLES.items():
            written[bucket] = self._update_bucket(session, staging, bucket, table, partition_key)
        return written

    def _update_bucket(
        self, session: Session, staging: str, bucket: str, table: str, partition_key: str
    ) -> int:
        ident = sql.Identifier
        changed = sql.SQL("t.priority IS DISTINCT FROM s.priority")
        statement = sql.SQL(
            "UPDATE {table} t SET {assign}, scored_at = now(), "
            "previous_priority = CASE WHEN {changed} THEN t.priority "
            "ELSE t.previous_priority END, "
            "priority_changed_partition = CASE WHEN {changed} THEN {p} "
            "ELSE t.priority_changed_partition END "
            "FROM {s} s WHERE s.tenant_id = t.tenant_id AND s.tenant_bucket = {bucket} "
            "AND ({old}) IS DISTINCT FROM ({new})"
        ).format(
            table=ident(table),
            assign=sql.SQL(", ").join(
                sql.SQL("{c} = s.{c}").format(c=ident(c)) for c in SCORE_COLUMNS
            ),
            changed=changed,
            p=sql.Literal(partition_key),
            s=ident(staging),
            bucket=sql.Literal(bucket),
            old=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in SCORE_COLUMNS),
            new=sql.SQL(", ").join(sql.SQL("s.{}").format(ident(c)) for c in SCORE_COLUMNS),
        )
        with driver_cursor(session) as cursor:
            cursor.execute(statement)
            return max(cursor.rowcount, 0)
