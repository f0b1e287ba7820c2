"""Repository of score history (``apac_tenant_score_snapshots``) and the scoring reads/writes
across the two bucket tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.set_based import (
    SetBasedRepository,
    analyze,
    keyset_after,
    merge_joins,
    read_frame,
)
from morpheus_pipelines.tenants.store.models import TenantScoreSnapshot
from morpheus_pipelines.tenants.store.routing_decision import FORCED_RULE, RETIRED_RULE
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
SCORING_FROM = sql.SQL(
    "apac_routing_decisions d "
    "JOIN apac_tenant_candidates c "
    "ON c.partition_key = d.partition_key AND c.tenant_id = d.tenant_id "
    "LEFT JOIN apac_enriched_tenants e "
    "ON e.partition_key = d.partition_key AND e.tenant_id = d.tenant_id"
)


def scoring_fingerprint(model_fingerprint: str) -> sql.Composable:
    return sql.SQL("md5({input} || {model})").format(
        input=SCORING_INPUT, model=sql.Literal(model_fingerprint)
    )


@dataclass(frozen=True)
class RecencyWindow:
    """When a ``last_active_at`` gives the same recency at two scoring times ``earlier`` and
    ``later``: never seen (no credit either day), old enough for no credit at ``earlier`` (so
    none at ``later``), or recent enough for full credit at ``later`` without being in the
    future at ``earlier`` (so full credit both days). Anything else is scored again."""

    earlier: datetime
    later: datetime
    full_credit_days: float
    zero_credit_days: float
    future_tolerance_days: float

    def condition(self, column: str) -> sql.Composable:
        def at(moment: datetime, days: float) -> sql.Composable:
            return sql.Literal(moment + timedelta(days=days))

        value = sql.SQL(column)
        return sql.SQL(
            "({v} IS NULL OR {v} <= {no_credit} OR ({v} >= {full_credit} AND {v} <= {not_ahead}))"
        ).format(
            v=value,
            no_credit=at(self.earlier, -self.zero_credit_days),
            # A second's margin: scoring counts whole seconds (rules.scoring).
            full_credit=at(self.later, -self.full_credit_days + 1 / 86_400),
            not_ahead=at(self.earlier, self.future_tolerance_days),
        )


@dataclass(frozen=True)
class RecencyShift:
    """The new score of a tenant whose recency moved and nothing else, computed in the
    carry's own statement: the old total minus the old recency points plus the new ones,
    with the model's formula and thresholds (docs/scoring.md, "Incremental scoring"). The
    arithmetic is :mod:`rules.scoring`'s, operation for operation in ``float8``, so it gives
    the same cents (tests/tenants/test_recency_shift.py). Only for ``last_active_at`` no
    later than ``as_of`` (a future timestamp may be corrupt: scored in Python) and for a
    model whose total is never capped (``ScoringModel.total_never_capped``)."""

    as_of: datetime
    full_credit_days: float
    zero_credit_days: float
    weight: float
    # (priority, threshold) from the highest threshold down; below the last: ``lowest``.
    thresholds: tuple[tuple[str, float], ...]
    lowest: str

    def cents(self, column: str) -> sql.Composable:
        """The recency points, in cents, of ``column`` (a ``timestamptz``) at ``as_of``."""
        return sql.SQL(
            "round(least(greatest(({zero} - ({as_of} - floor(extract(epoch FROM {v}))::float8)"
            " / 86400.0::float8) / ({zero} - {full}), 0.0::float8), 1.0::float8)"
            " * {weight} * 100.0::float8)::bigint"
        ).format(
            zero=_float8(self.zero_credit_days),
            full=_float8(self.full_credit_days),
            as_of=_float8(self.as_of.timestamp()),
            v=sql.SQL(column),
            weight=_float8(self.weight),
        )

    def applies(self, column: str, snapshot_alias: str) -> sql.Composable:
        """Whether ``column`` is not in the future at ``as_of`` and the base snapshot (alias
        ``snapshot_alias``) recorded its recency points in ``contributions``: else the tenant
        is scored in Python."""
        return sql.SQL("({v} <= {as_of} AND {s}.contributions ? 'recency')").format(
            v=sql.SQL(column), as_of=sql.Literal(self.as_of), s=sql.Identifier(snapshot_alias)
        )

    def calculated_priority(self, total_cents: sql.Composable) -> sql.Composable:
        """``rules.scoring``'s priority of a total of ``total_cents``: compared as ``float8``."""
        return sql.SQL("CASE {} ELSE {} END").format(
            sql.SQL(" ").join(
                sql.SQL("WHEN {}::float8 / 100.0::float8 >= {} THEN {}").format(
                    total_cents, _float8(threshold), sql.Literal(priority)
                )
                for priority, threshold in self.thresholds
            ),
            sql.Literal(self.lowest),
        )

    @staticmethod
    def json_points(cents: sql.Composable) -> sql.Composable:
        """``cents / 100`` as the JSON number ``json.dumps`` writes for that float (``15.0``,
        ``12.3``, ``0.05``): what ``rules.scoring`` stores in ``contributions``."""
        return sql.SQL(
            "CASE WHEN {c} % 100 = 0 THEN round({c} / 100.0, 1) ELSE trim_scale({c} / 100.0) END"
        ).format(c=cents)


def _float8(value: float) -> sql.Composable:
    # repr round-trips: the server parses the very double Python computes with.
    return sql.SQL("{}::float8").format(sql.Literal(repr(float(value))))


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
            # m.cents: the new recency points, NULL when they cannot have moved. OFFSET 0 keeps
            # the planner from pasting m's expressions into each use: evaluated once per row,
            # the copy's select took 5.9 s instead of 6.4 s at 1M (docs/performance.md).
            shift_join = sql.SQL(
                " CROSS JOIN LATERAL (SELECT r.cents, (s.total_score * 100)::bigint "
                "- ((s.contributions ->> 'recency')::numeric * 100)::bigint + r.cents AS total "
                "FROM (SELECT CASE WHEN {unmoved} THEN NULL ELSE {cents} END AS cents) r "
                "OFFSET 0) m"
            ).format(unmoved=unmoved, cents=shift.cents("c.last_active_at"))
            copyable = sql.SQL("(m.cents IS NULL OR {})").format(
                shift.applies("c.last_active_at", "s")
            )
            calculated = shift.calculated_priority(sql.SQL("m.total"))
            moved = {
                "total_score": sql.SQL("round(m.total / 100.0, 2)"),
                "calculated_priority": calculated,
                "priority": sql.SQL(
                    "CASE WHEN d.priority_override IS NULL THEN {} ELSE s.priority END"
                ).format(calculated),
                "contributions": sql.SQL(
                    "jsonb_set(s.contributions, '{{recency}}', to_jsonb({}))"
                ).format(shift.json_points(sql.SQL("m.cents"))),
            }
            values = sql.SQL(", ").join(
                sql.SQL("CASE WHEN m.cents IS NULL THEN s.{c} ELSE {moved} END").format(
                    c=sql.Identifier(c), moved=moved[c]
                )
                if c in moved
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
            scoring_from=SCORING_FROM,
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
                    "SELECT d.tenant_id FROM apac_routing_decisions d WHERE d.partition_key = {p} "
                    "AND {scored} AND NOT EXISTS (SELECT 1 FROM apac_tenant_score_snapshots s "
                    "WHERE s.partition_key = d.partition_key AND s.tenant_id = d.tenant_id "
                    "AND s.run_id = {run}) ORDER BY d.tenant_id"
                ).format(
                    p=sql.Literal(partition_key), scored=SCORED_DECISION, run=sql.Literal(run_id)
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
            "d.hubspot_sync_id, c.plan, c.seats, c.active_users_30d, c.last_active_at, "
            "e.employee_count, e.country, e.industry, {fingerprint} AS input_fingerprint "
            "FROM {scoring_from} "
            "WHERE d.partition_key = {p} AND {scored}{only} {after} "
            "ORDER BY d.tenant_id LIMIT {n}"
        ).format(
            fingerprint=scoring_fingerprint(model_fingerprint),
            scoring_from=SCORING_FROM,
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
                    session, sql.Identifier(staging), bucket, table, partition_key
                )
        return written

    def _update_bucket(
        self,
        session: Session,
        scores: sql.Composable,
        bucket: str,
        table: str,
        partition_key: str,
    ) -> int:
        """Set the score columns of ``table``'s unretired rows in ``bucket`` to those of the
        relation ``scores`` (``tenant_id``, ``tenant_bucket`` and :data:`SCORE_COLUMNS`) where
        they differ."""
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
            s=scores,
            bucket=sql.Literal(bucket),
            old=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in SCORE_COLUMNS),
            new=sql.SQL(", ").join(sql.SQL("s.{}").format(ident(c)) for c in SCORE_COLUMNS),
        )
        with driver_cursor(session) as cursor:
            cursor.execute(statement)
            return max(cursor.rowcount, 0)
