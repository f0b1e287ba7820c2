"""Repository of score history (``apac_tenant_score_snapshots``) and the scoring reads/writes
across the two bucket tables."""

from __future__ import annotations

import pandas as pd
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.models import TenantScoreSnapshot
from morpheus_pipelines.repositories.routing_decision import FORCED_RULE, RETIRED_RULE
from morpheus_pipelines.repositories.set_based import (
    SetBasedRepository,
    analyze,
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
# The decisions (alias ``d``) that are scoring input: routed, not forced, not retired.
SCORED_DECISION = sql.SQL(
    "d.rejection_reason IS NULL AND d.routing_rule NOT IN ({forced}, {retired})"
).format(forced=sql.Literal(FORCED_RULE), retired=sql.Literal(RETIRED_RULE))


class TenantScoreSnapshotRepository(SetBasedRepository[TenantScoreSnapshot]):
    model_class = TenantScoreSnapshot

    def read_scoring_input(
        self, session: Session, *, partition_key: str, after: str | None, limit: int
    ) -> pd.DataFrame:
        """Up to ``limit`` of the partition's routed tenants after ``after``, with the routing
        message (bucket, override, reason) and the signals the partition read for them (its
        candidate and enrichment rows: a backfill scores what it selected, not today's live
        rows). The forced Sales-owned ids, rejected rows and retirements are not scoring
        input."""
        query = sql.SQL(
            "SELECT d.tenant_id, d.tenant_bucket, d.priority_override, d.priority_reason, "
            "d.hubspot_sync_id, c.plan, c.seats, c.active_users_30d, c.last_active_at, "
            "e.employee_count, e.country, e.industry "
            "FROM apac_routing_decisions d "
            "JOIN apac_tenant_candidates c "
            "ON c.partition_key = d.partition_key AND c.tenant_id = d.tenant_id "
            "LEFT JOIN apac_enriched_tenants e "
            "ON e.partition_key = d.partition_key AND e.tenant_id = d.tenant_id "
            "WHERE d.partition_key = {p} AND {scored} {after} "
            "ORDER BY d.tenant_id LIMIT {n}"
        ).format(
            p=sql.Literal(partition_key),
            scored=SCORED_DECISION,
            after=keyset_after("d.tenant_id", after),
            n=sql.Literal(limit),
        )
        return read_frame(session, query)

    def delete_orphans(self, session: Session, *, partition_key: str) -> int:
        """Delete the partition's snapshots of tenants that are no longer scoring input (they
        left the partition, were retired or became forced)."""
        # Both tables were just bulk-written: on "empty table" estimates this anti-join became
        # a nested loop that took minutes at 190,000 tenants (docs/performance.md).
        analyze(session, "apac_tenant_score_snapshots")
        analyze(session, "apac_routing_decisions")
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "DELETE FROM apac_tenant_score_snapshots t WHERE t.partition_key = {p} "
                    "AND NOT EXISTS (SELECT 1 FROM apac_routing_decisions d "
                    "WHERE d.partition_key = t.partition_key AND d.tenant_id = t.tenant_id "
                    "AND {scored})"
                ).format(p=sql.Literal(partition_key), scored=SCORED_DECISION)
            )
            return max(cursor.rowcount, 0)

    def write_scores(
        self,
        session: Session,
        scores: pd.DataFrame,
        *,
        partition_key: str,
        run_id: str,
        live: bool = True,
    ) -> dict[str, int]:
        """Record the snapshots and, when the partition owns the live buckets (``live``),
        update the score columns of each (unretired) bucket row.

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
        if live:
            for bucket, table in BUCKET_TABLES.items():
                written[bucket] = self._update_bucket(
                    session, staging, bucket, table, partition_key
                )
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
            "AND t.retired_at IS NULL AND ({old}) IS DISTINCT FROM ({new})"
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
