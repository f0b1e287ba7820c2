"""Repository of score history (``apac_tenant_score_snapshots``) and the scoring reads/writes
across the two bucket tables."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.copying import read_frame
from morpheus_pipelines.platform.store.keyset import keyset_after
from morpheus_pipelines.platform.store.planner import analyze
from morpheus_pipelines.platform.store.set_based import SetBasedRepository, merge_joins
from morpheus_pipelines.tenants.store.day_tables import answers_on, candidates_on, decisions_on
from morpheus_pipelines.tenants.store.models import TenantScoreSnapshot
from morpheus_pipelines.tenants.store.routing_decision import FORCED_RULE, RETIRED_RULE
from morpheus_pipelines.tenants.store.scoring_sql import (
    SHIFTED_COLUMNS,
    RecencyShift,
    RecencyWindow,
)
from morpheus_pipelines.tenants.store.tenant_bucket import BUCKET_TABLES

SNAPSHOT_COLUMNS = (
    "tenant_id",
    "tenant_bucket",
    "score_model_version",
    "total_score",
    "calculated_priority",
    "priority",
    "priority_reason",
    "contributions",
    "input_fingerprint",
)
SCORE_COLUMNS = ("total_score", "calculated_priority", "priority", "priority_reason")
# What a bucket row takes from its tenant's score.
BUCKET_SCORE_COLUMNS = ("tenant_id", "tenant_bucket", *SCORE_COLUMNS)
# The decisions (alias ``d``) that are scoring input: routed, not forced, not retired.
SCORED_DECISION = sql.SQL(
    "d.rejection_reason IS NULL AND d.routing_rule NOT IN ({forced}, {retired})"
).format(forced=sql.Literal(FORCED_RULE), retired=sql.Literal(RETIRED_RULE))


# The scoring input of decision ``d`` (candidate ``c``, enrichment ``e``) and the model, as
# one text: equal fingerprints, equal scores on days where recency does not move
# (docs/scoring.md, "Incremental scoring"). Times in UTC, whatever the session's time zone.
SCORING_INPUT = sql.SQL(
    "ROW(d.tenant_bucket, d.priority_override, d.priority_reason, c.plan, c.seats, "
    "c.active_users_30d, c.last_active_at AT TIME ZONE 'UTC', e.employee_count, e.country, "
    "e.industry)::text"
)


def scoring_from(partition_key: str) -> sql.Composable:
    """The partition's decisions ``d`` joined to its candidates ``c`` and their answers
    ``e``: what scoring reads (filter ``d`` on the partition)."""
    return sql.SQL(
        "{decisions} d JOIN {candidates} c ON c.tenant_id = d.tenant_id "
        "LEFT JOIN {answers} e ON e.tenant_id = d.tenant_id"
    ).format(
        decisions=decisions_on(partition_key),
        candidates=candidates_on(partition_key),
        answers=answers_on(partition_key),
    )


def scoring_fingerprint(model_fingerprint: str) -> sql.Composable:
    return sql.SQL("md5({input} || {model})").format(
        input=SCORING_INPUT, model=sql.Literal(model_fingerprint)
    )


class TenantScoreSnapshotRepository(SetBasedRepository[TenantScoreSnapshot]):
    model_class = TenantScoreSnapshot

    def carry_forward(
        self,
        session: Session,
        *,
        partition_key: str,
        run_id: str,
        base_partition: str,
        model_fingerprint: str,
        recency: RecencyWindow,
        live: bool,
        shift: RecencyShift | None = None,
        source: Session | None = None,
    ) -> int:
        """Copy ``base_partition``'s score of every scoring input of ``partition_key`` with
        the same fingerprint and a recency that did not move; with ``shift``, also of every
        such tenant whose recency did move, its recency points and what follows from them
        recomputed in the same statement. For the live partition only tenants whose unretired
        bucket row still holds the base partition's score are copied: the shifted ones' rows need
        :meth:`update_buckets_from_run` in the same transaction. ``source``: a second
        connection to stream the rows with, when the partition has no snapshots yet
        (``write_selected``). Returns rows copied."""
        columns, rows = self.carry_forward_select(
            partition_key=partition_key,
            run_id=run_id,
            base_partition=base_partition,
            model_fingerprint=model_fingerprint,
            recency=recency,
            live=live,
            shift=shift,
        )
        return self.write_rows(
            session, columns=columns, rows=rows, partition_key=partition_key, source=source
        )

    def update_buckets_from_run(
        self, session: Session, *, partition_key: str, run_id: str
    ) -> dict[str, int]:
        """Update the unretired bucket rows whose score differs from the one this run wrote
        into the partition's snapshots (the recency-shifted ones after :meth:`carry_forward`);
        rows updated per bucket. Only this run's snapshots: a re-run's older rows are scored
        again afterwards."""
        written = sql.SQL(
            "(SELECT tenant_id, tenant_bucket, {scores} FROM apac_tenant_score_snapshots "
            "WHERE partition_key = {p} AND run_id = {run})"
        ).format(
            scores=sql.SQL(", ").join(map(sql.Identifier, SCORE_COLUMNS)),
            p=sql.Literal(partition_key),
            run=sql.Literal(run_id),
        )
        with merge_joins(session):
            return {
                bucket: self._update_bucket(session, written, bucket, table, partition_key)
                for bucket, table in BUCKET_TABLES.items()
            }

    def carry_forward_select(
        self,
        *,
        partition_key: str,
        run_id: str,
        base_partition: str,
        model_fingerprint: str,
        recency: RecencyWindow,
        live: bool,
        shift: RecencyShift | None = None,
    ) -> tuple[list[str], sql.Composed]:
        """The columns and rows of :meth:`carry_forward` (to write, or to ``EXPLAIN``)."""
        copied = [c for c in SNAPSHOT_COLUMNS if c != "tenant_id"]
        values = sql.SQL(", ").join(sql.SQL("s.{}").format(sql.Identifier(c)) for c in copied)
        # Copied: a recency that cannot have moved, or (with the shift) one moved here.
        copyable = unmoved = recency.condition("c.last_active_at")
        shift_join = sql.SQL("")
        if shift is not None:
            # m.cents: the new recency points, NULL when they cannot have moved.
            shift_join = shift.lateral(unmoved, "c.last_active_at")
            copyable = sql.SQL("(m.cents IS NULL OR {})").format(
                shift.applies("c.last_active_at", "s")
            )
            moved = shift.shifted()
            values = sql.SQL(", ").join(
                sql.SQL("CASE WHEN m.cents IS NULL THEN s.{c} ELSE {moved} END").format(
                    c=sql.Identifier(c), moved=moved[c]
                )
                if c in SHIFTED_COLUMNS
                else sql.SQL("s.{}").format(sql.Identifier(c))
                for c in copied
            )
        bucket_holds_score = sql.SQL("")
        joins = sql.SQL("")
        if live:
            joins = sql.SQL(
                " LEFT JOIN apac_active_tenants a ON a.tenant_id = s.tenant_id "
                "AND s.tenant_bucket = 'active' AND a.retired_at IS NULL "
                "LEFT JOIN apac_sales_owned_tenants o ON o.tenant_id = s.tenant_id "
                "AND s.tenant_bucket = 'sales_owned' AND o.retired_at IS NULL"
            )
            scores = sql.SQL(", ").join(
                sql.SQL("s.{}").format(sql.Identifier(c)) for c in SCORE_COLUMNS
            )

            def held(alias: str) -> sql.Composable:
                return sql.SQL("({}) IS NOT DISTINCT FROM ({})").format(
                    sql.SQL(", ").join(
                        sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(c))
                        for c in SCORE_COLUMNS
                    ),
                    scores,
                )

            bucket_holds_score = sql.SQL(
                " AND ((a.tenant_id IS NOT NULL AND {}) OR (o.tenant_id IS NOT NULL AND {}))"
            ).format(held("a"), held("o"))
        rows = sql.SQL(
            "SELECT {p}, d.tenant_id, {run}, now(), {values} "
            "FROM {scoring_from} JOIN apac_tenant_score_snapshots s "
            "ON s.partition_key = {base} AND s.tenant_id = d.tenant_id{joins}{shift_join} "
            "WHERE d.partition_key = {p} AND {scored} AND s.input_fingerprint = {fingerprint} "
            "AND {recency}{bucket_holds_score}"
        ).format(
            p=sql.Literal(partition_key),
            run=sql.Literal(run_id),
            values=values,
            scoring_from=scoring_from(partition_key),
            base=sql.Literal(base_partition),
            joins=joins,
            shift_join=shift_join,
            scored=SCORED_DECISION,
            fingerprint=scoring_fingerprint(model_fingerprint),
            recency=copyable,
            bucket_holds_score=bucket_holds_score,
        )
        return ["partition_key", "tenant_id", "run_id", "scored_at", *copied], rows

    def bucket_priorities(self, session: Session, *, partition_key: str) -> dict[str, int]:
        """Snapshots of the partition per ``bucket:priority``."""
        t = TenantScoreSnapshot
        rows = session.execute(
            select(t.tenant_bucket, t.priority, func.count())
            .where(t.partition_key == partition_key)
            .group_by(t.tenant_bucket, t.priority)
        )
        return {f"{bucket}:{priority}": n for bucket, priority, n in rows}

    def unscored_inputs(self, session: Session, *, partition_key: str, run_id: str) -> list[str]:
        """The partition's scoring input this run has not scored yet, in tenant-id order."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT d.tenant_id FROM {decisions} d WHERE {scored} "
                    "AND NOT EXISTS (SELECT 1 FROM apac_tenant_score_snapshots s "
                    "WHERE s.partition_key = d.partition_key AND s.tenant_id = d.tenant_id "
                    "AND s.run_id = {run}) ORDER BY d.tenant_id"
                ).format(
                    decisions=decisions_on(partition_key),
                    scored=SCORED_DECISION,
                    run=sql.Literal(run_id),
                )
            )
            return [tenant_id for (tenant_id,) in cursor]

    def read_scoring_input(
        self,
        session: Session,
        *,
        partition_key: str,
        after: str | None,
        limit: int,
        model_fingerprint: str = "",
        tenant_ids: Sequence[str] | None = None,
    ) -> pd.DataFrame:
        """Up to ``limit`` of the partition's routed tenants after ``after``, with the routing
        message (bucket, override, reason) and the signals the partition read for them (its
        candidate and enrichment rows: a backfill scores what it selected, not today's live
        rows). The forced Sales-owned ids, rejected rows and retirements are not scoring
        input."""
        query = sql.SQL(
            "SELECT d.tenant_id, d.tenant_bucket, d.priority_override, d.priority_reason, "
            "(SELECT hubspot_sync_id FROM apac_routing_decision_days WHERE partition_key = {p}) "
            "AS hubspot_sync_id, c.plan, c.seats, c.active_users_30d, c.last_active_at, "
            "e.employee_count, e.country, e.industry, {fingerprint} AS input_fingerprint "
            "FROM {scoring_from} "
            "WHERE d.partition_key = {p} AND {scored}{only} {after} "
            "ORDER BY d.tenant_id LIMIT {n}"
        ).format(
            fingerprint=scoring_fingerprint(model_fingerprint),
            scoring_from=scoring_from(partition_key),
            p=sql.Literal(partition_key),
            scored=SCORED_DECISION,
            only=sql.SQL("")
            if tenant_ids is None
            else sql.SQL(" AND d.tenant_id = ANY({}::text[])").format(
                sql.Literal(list(tenant_ids))
            ),
            after=keyset_after("d.tenant_id", after),
            n=sql.Literal(limit),
        )
        return read_frame(session, query)

    def delete_orphans(self, session: Session, *, partition_key: str, rerun: bool = True) -> int:
        """Delete the partition's snapshots of tenants that are no longer scoring input (they
        left the partition, were retired or became forced). Only a re-run can have any:
        ``rerun`` False skips the search (the statistics are refreshed either way)."""
        # Both tables were just bulk-written: on "empty table" estimates this anti-join became
        # a nested loop that took minutes at 190,000 tenants (docs/performance.md).
        analyze(session, "apac_tenant_score_snapshots")
        if not rerun:
            return 0
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "DELETE FROM apac_tenant_score_snapshots t WHERE t.partition_key = {p} "
                    "AND NOT EXISTS (SELECT 1 FROM {decisions} d "
                    "WHERE d.tenant_id = t.tenant_id AND {scored})"
                ).format(
                    p=sql.Literal(partition_key),
                    decisions=decisions_on(partition_key),
                    scored=SCORED_DECISION,
                )
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

        When none of the tenants has a snapshot of the partition yet (its first run), the
        snapshots are copied straight in, and the bucket update reads a staging table of the
        scores alone; otherwise every column is staged and upserted.
        """
        snapshots = self.copy_run_if_new(
            session,
            scores,
            columns=SNAPSHOT_COLUMNS,
            partition_key=partition_key,
            run_id=run_id,
            stamped="scored_at",
        )
        if snapshots is None:
            staging = self.copy_frame_into_staging(session, scores, columns=SNAPSHOT_COLUMNS)
            snapshots = self.upsert_run_from_staging(
                session,
                staging,
                columns=SNAPSHOT_COLUMNS,
                partition_key=partition_key,
                run_id=run_id,
                stamped="scored_at",
            )
        elif live:
            # The bucket update reads the scores alone: no second parse of ``contributions``.
            staging = self.copy_frame_into_staging(session, scores, columns=BUCKET_SCORE_COLUMNS)
        written = {"snapshots": snapshots}
        if live:
            for bucket, table in BUCKET_TABLES.items():
                written[bucket] = self._update_bucket(
                    session, sql.Identifier(staging), bucket, table, partition_key, in_range=True
                )
        return written

    def _update_bucket(
        self,
        session: Session,
        scores: sql.Composable,
        bucket: str,
        table: str,
        partition_key: str,
        in_range: bool = False,
    ) -> int:
        """:func:`bucket_score_update` in the session's transaction; rows updated."""
        statement = bucket_score_update(scores, bucket, table, partition_key, in_range=in_range)
        with driver_cursor(session) as cursor:
            cursor.execute(statement)
            return max(cursor.rowcount, 0)


def bucket_score_update(
    scores: sql.Composable, bucket: str, table: str, partition_key: str, *, in_range: bool = False
) -> sql.Composed:
    """Set the score columns of ``table``'s unretired rows in ``bucket`` to those of the
    relation ``scores`` (``tenant_id``, ``tenant_bucket`` and :data:`SCORE_COLUMNS`) where they
    differ. ``in_range``: ``scores`` is one chunk of the partition's keys, so the update reads
    the table's key range between its least and greatest ``tenant_id`` (in the database's
    collation), not the whole table once per chunk."""
    ident = sql.Identifier
    key_range = sql.SQL("")
    if in_range:
        key_range = sql.SQL(
            " AND t.tenant_id BETWEEN (SELECT min(tenant_id) FROM {s}) "
            "AND (SELECT max(tenant_id) FROM {s})"
        ).format(s=scores)
    changed = sql.SQL("t.priority IS DISTINCT FROM s.priority")
    return sql.SQL(
        "UPDATE {table} t SET {assign}, scored_at = now(), "
        "previous_priority = CASE WHEN {changed} THEN t.priority "
        "ELSE t.previous_priority END, "
        "priority_changed_partition = CASE WHEN {changed} THEN {p} "
        "ELSE t.priority_changed_partition END "
        "FROM {s} s WHERE s.tenant_id = t.tenant_id AND s.tenant_bucket = {bucket} "
        "AND t.retired_at IS NULL AND ({old}) IS DISTINCT FROM ({new}){key_range}"
    ).format(
        key_range=key_range,
        table=ident(table),
        assign=sql.SQL(", ").join(sql.SQL("{c} = s.{c}").format(c=ident(c)) for c in SCORE_COLUMNS),
        changed=changed,
        p=sql.Literal(partition_key),
        s=scores,
        bucket=sql.Literal(bucket),
        old=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in SCORE_COLUMNS),
        new=sql.SQL(", ").join(sql.SQL("s.{}").format(ident(c)) for c in SCORE_COLUMNS),
    )
