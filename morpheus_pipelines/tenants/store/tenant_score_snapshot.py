"""Repository of score history (``apac_tenant_score_versions``, read a day at a time as
``apac_tenant_score_snapshots``) and the scoring reads/writes across the two bucket tables."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.copying import read_frame
from morpheus_pipelines.platform.store.day_versions import (
    finish_day,
    remove_from_day,
    start_day,
    valid_on,
    write_day,
)
from morpheus_pipelines.platform.store.keyset import keyset_after
from morpheus_pipelines.platform.store.planner import (
    analyze,
    analyze_transient,
    index_probes,
    worth_analyzing,
)
from morpheus_pipelines.platform.store.set_based import (
    SetBasedRepository,
    transaction_start,
)
from morpheus_pipelines.tenants.store.day_tables import (
    SCORE_VERSIONS,
    answers_on,
    candidates_on,
    decisions_on,
)
from morpheus_pipelines.tenants.store.models import TenantScoreSnapshot, TenantScoreVersion
from morpheus_pipelines.tenants.store.routing_decision import FORCED_RULE, RETIRED_RULE
from morpheus_pipelines.tenants.store.tenant_bucket import BUCKET_TABLES

# What a chunk of scores gives of each tenant: the scorer's columns, the numbers of its
# input's versions, its ``last_active_at``, whether its version moves its recency on read
# (``recency_key`` NULL) and from when it may (docs/scoring.md, "How scores are stored").
# Stamped on every version a run writes.
STAMPED_COLUMNS = ("run_id", "scored_for", "scored_at")
SCORE_FRAME_COLUMNS = tuple(c for c in SCORE_VERSIONS.columns if c not in STAMPED_COLUMNS)
SCORE_COLUMNS = ("total_score", "calculated_priority", "priority", "priority_reason")
# What a bucket row takes from its tenant's score.
BUCKET_SCORE_COLUMNS = ("tenant_id", "tenant_bucket", *SCORE_COLUMNS)
# The decisions (alias ``d``) that are scoring input: routed, not forced, not retired.
SCORED_DECISION = sql.SQL(
    "d.rejection_reason IS NULL AND d.routing_rule NOT IN ({forced}, {retired})"
).format(forced=sql.Literal(FORCED_RULE), retired=sql.Literal(RETIRED_RULE))


# The numbers of the versions a score was computed from: decision ``d``, candidate ``c`` and
# its answer ``e`` (none: NULL). The same numbers and model, the same score on days where
# recency does not move (docs/scoring.md, "Incremental scoring").
INPUT_VERSIONS = {
    "candidate_version": "c",
    "answer_version": "e",
    "decision_version": "d",
}


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


def input_versions() -> sql.Composable:
    """The :data:`INPUT_VERSIONS` of each row of :func:`scoring_from`, as named columns."""
    return sql.SQL(", ").join(
        sql.SQL("{}.version_number AS {}").format(sql.Identifier(alias), sql.Identifier(name))
        for name, alias in INPUT_VERSIONS.items()
    )


def same_input_versions(version: str) -> sql.Composable:
    """SQL true when score version ``version`` names the versions of :func:`scoring_from`'s
    row (an answer: none then and none now, too)."""
    return sql.SQL(" AND ").join(
        sql.SQL("{v}.{name} IS NOT DISTINCT FROM {alias}.version_number").format(
            v=sql.Identifier(version), name=sql.Identifier(name), alias=sql.Identifier(alias)
        )
        for name, alias in INPUT_VERSIONS.items()
    )


@dataclass(frozen=True)
class LiveScoring:
    """The last run that wrote a day's scores into the live bucket rows."""

    partition_key: str
    started_at: datetime
    run_id: str | None


class TenantScoreSnapshotRepository(SetBasedRepository[TenantScoreVersion]):
    """The scores as versions valid for a range of days (``SCORE_VERSIONS``), read a day at
    a time through the view ``apac_tenant_score_snapshots`` (docs/scoring.md, "How scores are
    stored"). A day is written over several transactions: :meth:`start_day`, the chunks'
    :meth:`write_scores`, then :meth:`finish_day`, until which the day answers nothing."""

    model_class = TenantScoreVersion

    def start_day(self, session: Session, *, partition_key: str) -> None:
        """Begin writing the partition's scores: it answers nothing until :meth:`finish_day`."""
        start_day(session, SCORE_VERSIONS, day=partition_key)

    def newest_partition_before(self, session: Session, *, partition_key: str) -> str | None:
        """The newest partition before ``partition_key`` whose scores are finished."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                "SELECT max(partition_key) FROM apac_tenant_score_days "
                "WHERE partition_key < %s AND complete",
                (partition_key,),
            )
            return cursor.fetchone()[0]

    def changed_inputs(
        self, session: Session, *, partition_key: str, model_version: str
    ) -> tuple[list[str] | None, int]:
        """The partition's scoring input whose version valid on the day cannot answer it, in
        tenant-id order (None: every tenant, when none answers), and how many tenants the
        input has. A version answers a tenant when it has the tenant's bucket, the model and
        the numbers of the candidate, answer and decision versions the day reads for the
        tenant, and moves its recency on read (``recency_key`` NULL)."""
        day = sql.Literal(partition_key)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL("SELECT count(*) FROM {decisions} d WHERE {scored}").format(
                    decisions=decisions_on(partition_key), scored=SCORED_DECISION
                )
            )
            inputs = cursor.fetchone()[0]
            cursor.execute(
                sql.SQL(
                    "SELECT d.tenant_id FROM {scoring_from} WHERE d.partition_key = {p} "
                    "AND {scored} AND NOT EXISTS (SELECT 1 FROM apac_tenant_score_versions v "
                    "WHERE v.tenant_id = d.tenant_id AND {valid} AND v.recency_key IS NULL "
                    "AND v.tenant_bucket = d.tenant_bucket AND v.score_model_version = {version} "
                    "AND {same_inputs}) ORDER BY d.tenant_id"
                ).format(
                    scoring_from=scoring_from(partition_key),
                    p=day,
                    scored=SCORED_DECISION,
                    valid=valid_on("v", day),
                    version=sql.Literal(model_version),
                    same_inputs=same_input_versions("v"),
                )
            )
            changed = [tenant_id for (tenant_id,) in cursor]
            return (None if len(changed) == inputs else changed), inputs

    def last_live_scoring(self, session: Session) -> LiveScoring | None:
        """The day whose scores the live bucket rows last received, when that run began and
        which run it was (:meth:`finish_day`); None when no day has."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                "SELECT partition_key, live_since, live_run_id FROM apac_tenant_score_days "
                "WHERE complete AND live_since IS NOT NULL ORDER BY live_since DESC LIMIT 1"
            )
            row = cursor.fetchone()
            return None if row is None else LiveScoring(*row)

    def holds_any(
        self, session: Session, *, partition_key: str, between: tuple[str, str] | None = None
    ) -> bool:
        """Whether any version is valid on the partition (written for it or continued into
        it), finished or not; ``between``: any of a range of tenant ids (in the database's
        order)."""
        in_range = sql.SQL("")
        if between is not None:
            in_range = sql.SQL(" AND v.tenant_id BETWEEN {} AND {}").format(
                *map(sql.Literal, between)
            )
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT EXISTS (SELECT 1 FROM apac_tenant_score_versions v "
                    "WHERE {valid}{in_range})"
                ).format(valid=valid_on("v", sql.Literal(partition_key)), in_range=in_range)
            )
            return bool(cursor.fetchone()[0])

    def finish_day(
        self,
        session: Session,
        *,
        partition_key: str,
        live_since: datetime | None = None,
        live_run_id: str | None = None,
        wrote: int | None = None,
        scores: int = 0,
        held_before: bool = True,
    ) -> int:
        """Remove from the partition the tenants that are no longer its scoring input (they
        left it, were retired or became forced; a chunk removes those it rejected), and make
        what was written its scores, in the caller's transaction (with
        :meth:`update_moved_buckets` for a live partition, whose run ``live_run_id`` began at
        ``live_since``: the day answers its scores with the bucket rows brought to them).
        ``wrote``: the versions the run wrote (None: unknown) of the day's ``scores``; the
        statistics are refreshed when they and the tenants removed are more than
        ``planner.ANALYZE_SHARE`` of the day's scores, else those of the last bulk write
        stay. ``held_before`` False: no version was valid on the day when the run began, so
        it holds only what the run wrote, and nothing is removed. Returns the tenants
        removed."""
        day = sql.Literal(partition_key)
        unscored = sql.SQL(
            "SELECT v.tenant_id FROM apac_tenant_score_versions v WHERE {valid} "
            "AND NOT EXISTS (SELECT 1 FROM {decisions} d WHERE d.tenant_id = v.tenant_id "
            "AND {scored})"
        ).format(
            valid=valid_on("v", day), decisions=decisions_on(partition_key), scored=SCORED_DECISION
        )
        removed = 0
        if held_before:
            removed = remove_from_day(
                session, SCORE_VERSIONS, day=partition_key, keys=unscored, finishes_day=False
            )
        finish_day(session, SCORE_VERSIONS, day=partition_key)
        if live_since is not None:
            with driver_cursor(session) as cursor:
                cursor.execute(
                    "UPDATE apac_tenant_score_days SET live_since = %s, live_run_id = %s "
                    "WHERE partition_key = %s",
                    (live_since, live_run_id, partition_key),
                )
        # The day's statistics: the bucket update and the next day's reads plan on them.
        if wrote is None or worth_analyzing(wrote + removed, scores):
            analyze(session, "apac_tenant_score_versions")
        return removed

    def update_moved_buckets(
        self,
        session: Session,
        *,
        partition_key: str,
        started_at: datetime,
        since: tuple[LiveScoring, tuple[datetime, datetime]] | None,
    ) -> dict[str, int]:
        """Bring each unretired bucket row whose score differs from the one the finished day
        answers to it, among the scores not written for the day by its run (which began at
        ``started_at`` and updated those rows with each chunk). ``since``: the last live
        scoring, and the ``last_active_at`` range whose recency may have moved since its day
        (``rules.scoring.recency_may_move``); then only these are compared: the tenants in
        that range, the bucket rows routing wrote since that scoring began, and the scores
        other runs wrote since (a day scored while not live, another model). Every other row
        holds that scoring's score, which the day's equals. None: every score is compared.
        The day's scores of those tenants are computed once, into a temporary table both
        buckets are updated from. Rows updated per bucket."""
        only = sql.SQL("")
        if since is not None:
            live, (after, before) = since
            only = sql.SQL(
                " AND ((s.last_active_at > {after} AND s.last_active_at < {before}) "
                "OR (s.scored_at >= {live_since} AND s.run_id IS DISTINCT FROM {live_run}) "
                "OR s.tenant_id IN (SELECT tenant_id FROM apac_active_tenants "
                "WHERE updated_at >= {live_since} UNION ALL SELECT tenant_id "
                "FROM apac_sales_owned_tenants WHERE updated_at >= {live_since}))"
            ).format(
                after=sql.Literal(after),
                before=sql.Literal(before),
                live_since=sql.Literal(live.started_at),
                live_run=sql.Literal(live.run_id),
            )
        moved = sql.Identifier("_moved_scores")
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "CREATE TEMP TABLE {moved} ON COMMIT DROP AS SELECT {columns} "
                    "FROM apac_tenant_score_snapshots s WHERE s.partition_key = {p} "
                    "AND s.scored_at < {started}{only}"
                ).format(
                    moved=moved,
                    columns=sql.SQL(", ").join(
                        sql.SQL("s.{}").format(sql.Identifier(c)) for c in BUCKET_SCORE_COLUMNS
                    ),
                    p=sql.Literal(partition_key),
                    started=sql.Literal(started_at),
                    only=only,
                )
            )
        analyze_transient(session, "_moved_scores")
        # A day's movers are a minority of the bucket rows: a probe of the key per mover
        # costs less than a hash of every row. Every score compared, the planner chooses.
        with index_probes(session) if since is not None else nullcontext():
            return {
                bucket: self._update_bucket(session, moved, bucket, table, partition_key)
                for bucket, table in BUCKET_TABLES.items()
            }

    def bucket_priorities(self, session: Session, *, partition_key: str) -> dict[str, int]:
        """Snapshots of the partition per ``bucket:priority``."""
        t = TenantScoreSnapshot
        rows = session.execute(
            select(t.tenant_bucket, t.priority, func.count())
            .where(t.partition_key == partition_key)
            .group_by(t.tenant_bucket, t.priority)
        )
        return {f"{bucket}:{priority}": n for bucket, priority, n in rows}

    def read_scoring_input(
        self,
        session: Session,
        *,
        partition_key: str,
        after: str | None,
        limit: int,
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
            "e.employee_count, e.country, e.industry, {versions} "
            "FROM {scoring_from} "
            "WHERE d.partition_key = {p} AND {scored}{only} {after} "
            "ORDER BY d.tenant_id LIMIT {n}"
        ).format(
            versions=input_versions(),
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

    def write_scores(
        self,
        session: Session,
        scores: pd.DataFrame,
        *,
        partition_key: str,
        run_id: str,
        live: bool = True,
        rejected_ids: Sequence[str] = (),
    ) -> dict[str, int]:
        """Write a chunk of the partition's scores (:data:`SCORE_FRAME_COLUMNS`, in tenant-id
        order) into the day being written and, when the partition owns the live buckets
        (``live``), update the score columns of each (unretired) bucket row. ``rejected_ids``:
        tenants of the chunk that were not scored, removed from the day.

        A bucket row is rewritten only when its score or priority changed; a priority change
        keeps the old value in ``previous_priority`` and the partition in
        ``priority_changed_partition`` (what the Daily Summary reports as new or changed).

        When no version of the chunk's key range is valid on the day (the tenants' first
        score, or a day before any), the rows are copied straight into the versions, and
        the bucket update reads a staging table of the scores alone; otherwise every column
        is staged and written as the day's change (``write_day``).
        """
        following = start_day(session, SCORE_VERSIONS, day=partition_key)
        stamps = {"run_id": run_id, "scored_for": partition_key}
        written = {"snapshots": 0}
        staging = None
        if not len(scores):
            copied = 0
        elif self.holds_any(
            session,
            partition_key=partition_key,
            between=(scores["tenant_id"].iloc[0], scores["tenant_id"].iloc[-1]),
        ):
            copied = None
        else:
            copied = self.copy_frame_if_new(
                session,
                scores,
                columns=SCORE_FRAME_COLUMNS,
                constants={
                    **stamps,
                    "scored_at": transaction_start(session),
                    "valid_from": partition_key,
                    "valid_to": following,
                },
            )
        if copied is not None:
            written["snapshots"] = copied
        else:
            staging = self.copy_frame_into_staging(session, scores, columns=SCORE_FRAME_COLUMNS)
            values = {c: sql.Literal(v) for c, v in stamps.items()} | {
                "scored_at": sql.SQL("now()")
            }
            rows = sql.SQL("SELECT {columns} FROM {staging}").format(
                columns=sql.SQL(", ").join(
                    values.get(c, sql.Identifier(c)) for c in SCORE_VERSIONS.columns
                ),
                staging=sql.Identifier(staging),
            )
            written["snapshots"] = write_day(
                session,
                SCORE_VERSIONS,
                day=partition_key,
                rows=rows,
                complete=False,
                finishes_day=False,
            )
        if rejected_ids:
            written["rejected_removed"] = remove_from_day(
                session,
                SCORE_VERSIONS,
                day=partition_key,
                keys=sql.SQL("SELECT unnest({}::text[])").format(sql.Literal(list(rejected_ids))),
                finishes_day=False,
            )
        if live and len(scores):
            if staging is None:
                # The bucket update reads the scores alone: no second parse of
                # ``contributions``.
                staging = self.copy_frame_into_staging(
                    session, scores, columns=BUCKET_SCORE_COLUMNS
                )
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
