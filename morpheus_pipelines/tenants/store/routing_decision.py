"""Repository of the routing decision record: why each tenant of a partition is where it is."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import pandas as pd
from psycopg import sql
from sqlalchemy import text
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.base import BaseRepository
from morpheus_pipelines.platform.store.day_versions import (
    finish_day,
    remove_from_day,
    start_day,
    valid_on,
    write_day,
)
from morpheus_pipelines.platform.store.grouping import counts_by_dimension
from morpheus_pipelines.platform.store.planner import (
    analyze,
    analyze_transient,
    no_nested_loops,
    worth_analyzing,
)
from morpheus_pipelines.platform.store.set_based import SetBasedRepository, transaction_start
from morpheus_pipelines.tenants.rules.routing_inputs import TENANT_KEY_COLUMNS, RuleInputs
from morpheus_pipelines.tenants.rules.routing_plan import RoutingBase
from morpheus_pipelines.tenants.rules.vocabulary import RoutingRule
from morpheus_pipelines.tenants.store.day_tables import (
    DECISION_VERSIONS,
    candidates_on,
    candidates_with_answers,
    decisions_on,
)
from morpheus_pipelines.tenants.store.models import (
    RoutingDecision,
    RoutingDecisionVersion,
    RoutingInput,
    RoutingState,
)

# The snapshot a run routed with: the same for every decision of its day, so the day's
# (``apac_routing_decision_days``), not each decision's.
RUN_EVIDENCE_COLUMNS = ("snapshot_status", "hubspot_sync_id", "hubspot_snapshot_synced_at")
# A decision as routing decides it: what the versions keep, and the day's snapshot evidence.
DECISION_COLUMNS = (DECISION_VERSIONS.key, *DECISION_VERSIONS.compared, *RUN_EVIDENCE_COLUMNS)
# What a live run records of each tenant it decided (apac_routing_inputs).
INPUT_COLUMNS = ("tenant_id", "candidate_version", "answer_version", *TENANT_KEY_COLUMNS)
DAYS = sql.Identifier(DECISION_VERSIONS.days)
VERSIONS = sql.Identifier(DECISION_VERSIONS.versions)
# The tenants a run carried from the day before, for the rest of its transaction.
CARRIED = "routing_carried"


# The partition ``:p``'s candidates and decisions, for the statements below bound by name.
CANDIDATES_ON_P = candidates_on(sql.SQL(":p")).as_string(None)
DECISIONS_ON_P = decisions_on(sql.SQL(":p")).as_string(None)

# Decision rows of tenants that are not candidates of their partition: retirements.
RETIRED_RULE = RoutingRule.RETIRED.value
FORCED_RULE = RoutingRule.FORCED_SALES_OWNED.value

# Violation counts of the routing checks for one partition (0 everywhere when routing is
# right). Each can be made to fail by a real defect; tests/tenants/test_checks_can_fail.py
# shows how.
# Candidates without a decision, and decisions (retirements aside) without a candidate: one
# full join of the partition's two key ranges (two anti-joins read both twice).
NOT_ROUTED_ONCE_SQL = f"""
SELECT count(*) FROM
  {CANDIDATES_ON_P} c
FULL JOIN
  (SELECT tenant_id, routing_rule FROM {DECISIONS_ON_P} d) d
ON d.tenant_id = c.tenant_id
WHERE d.tenant_id IS NULL OR (c.tenant_id IS NULL AND d.routing_rule <> 'retired')
"""
# A routed decision whose tenant is not (or not only, or a retired row) in the bucket it names.
DECISIONS_NOT_IN_BUCKET_SQL = f"""
SELECT count(*) FROM {DECISIONS_ON_P} d
LEFT JOIN apac_active_tenants a ON a.tenant_id = d.tenant_id AND a.retired_at IS NULL
LEFT JOIN apac_sales_owned_tenants s ON s.tenant_id = d.tenant_id AND s.retired_at IS NULL
WHERE d.tenant_bucket IS NOT NULL AND d.routing_rule <> 'retired'
AND NOT ((d.tenant_bucket = 'active' AND a.tenant_id IS NOT NULL AND s.tenant_id IS NULL)
      OR (d.tenant_bucket = 'sales_owned' AND s.tenant_id IS NOT NULL AND a.tenant_id IS NULL))
"""
FORCED_NOT_SALES_OWNED_SQL = f"""
SELECT count(*) FROM {CANDIDATES_ON_P} c
WHERE c.tenant_id = ANY(:ids) AND c.rejection_reason IS NULL
AND NOT EXISTS (SELECT 1 FROM apac_sales_owned_tenants s WHERE s.tenant_id = c.tenant_id)
"""


class RoutingDecisionRepository(SetBasedRepository[RoutingDecision]):
    """``apac_routing_decisions``: read through its view, written as versions
    (``DECISION_VERSIONS``). A run begins its day (:meth:`begin_day`), which then answers
    nothing until :meth:`finish_day`; a day routed from the day before holds that day's
    decisions of every tenant until the run writes what changed."""

    model_class = RoutingDecision

    def newest_day(self, session: Session, *, before: str | None = None) -> str | None:
        """The newest day routing began (finished or not), before ``before`` if given."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL("SELECT max(partition_key) FROM {days}{before}").format(
                    days=DAYS,
                    before=sql.SQL("")
                    if before is None
                    else sql.SQL(" WHERE partition_key < {}").format(sql.Literal(before)),
                )
            )
            return cursor.fetchone()[0]

    def has_partition(self, session: Session, *, partition_key: str) -> bool:
        """Whether routing began ``partition_key`` before (a re-run)."""
        return self.finished(session, partition_key=partition_key) is not None

    def finished(self, session: Session, *, partition_key: str) -> bool | None:
        """Whether routing finished ``partition_key`` (None: it never began it)."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL("SELECT complete FROM {days} WHERE partition_key = %s").format(days=DAYS),
                (partition_key,),
            )
            row = cursor.fetchone()
        return None if row is None else bool(row[0])

    def superseding_partition(self, session: Session, *, partition_key: str) -> str | None:
        """The newest routed partition when it is later than ``partition_key``, else None.

        The newest partition routing has begun owns the live bucket rows; a partition with a
        later one is history: a backfill or late re-run of it writes only its own
        partition-keyed rows (docs/partitions.md, "Live state and history")."""
        newest = self.newest_day(session)
        return newest if newest is not None and newest > partition_key else None

    def begin_day(
        self, session: Session, *, partition_key: str, run_id: str, evidence: Mapping[str, object]
    ) -> None:
        """Begin writing the day's decisions: it answers nothing until :meth:`finish_day`,
        and records the snapshot ``evidence`` (``RUN_EVIDENCE_COLUMNS``) the run routes with."""
        start_day(session, DECISION_VERSIONS, day=partition_key)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "UPDATE {days} SET run_id = %s, {evidence} WHERE partition_key = %s"
                ).format(
                    days=DAYS,
                    evidence=sql.SQL(", ").join(
                        sql.SQL("{} = %s").format(sql.Identifier(c)) for c in RUN_EVIDENCE_COLUMNS
                    ),
                ),
                (run_id, *(evidence[c] for c in RUN_EVIDENCE_COLUMNS), partition_key),
            )

    def remove_orphans(self, session: Session, *, partition_key: str) -> int:
        """Remove from the day every tenant that is not one of its candidates, except the
        retirements a run of the day recorded (``decided_for``; not one of an earlier day
        that a backfill let continue from this one): a tenant that left since the day routed
        from, or since an earlier run of the day. Returns the tenants removed."""
        keys = sql.SQL(
            "SELECT v.tenant_id FROM {versions} v WHERE {valid} "
            "AND NOT (v.routing_rule = {retired} AND v.decided_for = {day}) "
            "AND NOT EXISTS (SELECT FROM {candidates} c WHERE c.tenant_id = v.tenant_id)"
        ).format(
            versions=VERSIONS,
            valid=valid_on("v", sql.Literal(partition_key)),
            retired=sql.Literal(RETIRED_RULE),
            day=sql.Literal(partition_key),
            candidates=candidates_on(partition_key),
        )
        return remove_from_day(
            session, DECISION_VERSIONS, day=partition_key, keys=keys, finishes_day=False
        )

    def finish_day(
        self,
        session: Session,
        *,
        partition_key: str,
        changed: int | None = None,
        decisions: int = 0,
    ) -> None:
        """Make what the run wrote the day's decisions. ``changed``: at most how many of the
        day's ``decisions`` the run changed (None: unknown); the statistics are refreshed
        when that is more than ``planner.ANALYZE_SHARE`` of them, else those of the last bulk
        write stay."""
        finish_day(session, DECISION_VERSIONS, day=partition_key)
        # Fresh statistics keep the next asset's statements on good plans after a bulk write
        # (docs/performance.md).
        if changed is None or worth_analyzing(changed, decisions):
            analyze(session, DECISION_VERSIONS.versions)

    def check_figures(
        self, session: Session, *, partition_key: str, forced_ids: frozenset[str], live: bool
    ) -> dict[str, int]:
        """Violations per routing check (see ``ROUTING_CHECKS`` in the tenants assets).

        ``decisions_match_buckets`` compares with the live buckets, so it applies to the
        partition that owns them (``live``); an older partition's decisions are history.
        """

        def count(statement: str, **params: object) -> int:
            return int(session.scalar(text(statement), {"p": partition_key, **params}) or 0)

        overlap = session.scalar(
            text(
                "SELECT count(*) FROM apac_active_tenants a "
                "JOIN apac_sales_owned_tenants s ON s.tenant_id = a.tenant_id"
            )
        )
        return {
            "buckets_disjoint": int(overlap or 0),
            "every_candidate_routed_once": count(NOT_ROUTED_ONCE_SQL),
            "decisions_match_buckets": count(DECISIONS_NOT_IN_BUCKET_SQL) if live else 0,
            "forced_ids_sales_owned": count(FORCED_NOT_SALES_OWNED_SQL, ids=sorted(forced_ids))
            if live and forced_ids
            else 0,
        }

    def record(
        self, session: Session, frame: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> int:
        """Write one decision per tenant of ``frame`` to the day begun with :meth:`begin_day`;
        returns the tenants whose decision of the day changed (an unchanged one keeps the run
        and time that wrote it).

        A re-run that finds a tenant already in the bucket an earlier run of the same
        partition moved it to keeps ``moved``/``moved_from`` of that decision, so re-running
        a partition reproduces the same record; a move of an earlier day that a backfill let
        continue from this one is not this day's (``decided_for``). On the only day routed
        so far, the rows are copied straight in when none of the tenants has one yet (a first
        run): the same rows, for about half the time.
        """
        rows = frame.assign(
            run_id=run_id, decided_at=transaction_start(session), decided_for=partition_key
        )
        # The table's lock before the days are read: no other day may be begun meanwhile.
        start_day(session, DECISION_VERSIONS, day=partition_key)
        versions = _DecisionVersions()
        if self.only_day(session, partition_key=partition_key):
            copied = versions.copy_frame_if_new(
                session,
                rows,
                columns=DECISION_VERSIONS.columns,
                constants={"valid_from": partition_key, "valid_to": None},
            )
            if copied is not None:
                return copied
        staging = versions.copy_frame_into_staging(session, rows, columns=DECISION_VERSIONS.columns)
        staged = sql.Identifier(staging)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "UPDATE {s} s SET moved = true, moved_from = d.moved_from "
                    "FROM {versions} d WHERE d.valid_from = {p} AND d.decided_for = {p} "
                    "AND d.tenant_id = s.tenant_id AND d.moved AND NOT s.moved "
                    "AND d.tenant_bucket IS NOT DISTINCT FROM s.tenant_bucket"
                ).format(s=staged, versions=VERSIONS, p=sql.Literal(partition_key))
            )
        return write_day(
            session,
            DECISION_VERSIONS,
            day=partition_key,
            rows=sql.SQL("SELECT {columns} FROM {s}").format(
                columns=sql.SQL(", ").join(map(sql.Identifier, DECISION_VERSIONS.columns)),
                s=staged,
            ),
            complete=False,
            finishes_day=False,
        )

    def only_day(self, session: Session, *, partition_key: str) -> bool:
        """Whether ``partition_key`` is the only day routing has begun: then every version
        starts on it, and a tenant with a decision of the day is a key already there."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL("SELECT NOT EXISTS (SELECT FROM {days} WHERE partition_key <> %s)").format(
                    days=DAYS
                ),
                (partition_key,),
            )
            return bool(cursor.fetchone()[0])

    def summary(self, session: Session, *, partition_key: str) -> dict[str, dict[str, int]]:
        """Counts per bucket, rule and match method, moves, ambiguity and free mail: one scan
        of the partition, grouped by every dimension at once (aggregated by the parallel
        workers, where ``GROUPING SETS`` are aggregated in one process; docs/decisions/0069),
        each dimension's counts summed from the groups."""
        names = (
            ("by_bucket", "tenant_bucket"),
            ("by_source_type", "source_type"),
            ("by_rule", "routing_rule"),
            ("by_match_method", "hubspot_match_method"),
            ("by_moved_from", "moved_from"),
            ("by_email_domain_class", "email_domain_class"),
        )
        columns = ", ".join(column for _, column in names)
        rows = session.execute(
            text(
                f"SELECT {columns}, count(*), "
                "count(*) FILTER (WHERE ambiguous_match), count(*) FILTER (WHERE moved), "
                "count(*) FILTER (WHERE rejection_reason IS NOT NULL) "
                f"FROM {DECISIONS_ON_P} d GROUP BY {columns}"
            ),
            {"p": partition_key},
        ).all()
        width = len(names)
        summary = counts_by_dimension(
            ((row[:width], row[width]) for row in rows), [name for name, _ in names]
        )
        totals = ("decisions", "ambiguous", "moved", "rejected")
        summary["totals"] = {
            key: sum(row[width + i] for row in rows) for i, key in enumerate(totals)
        }
        return summary

    def carry_forward(
        self,
        session: Session,
        *,
        partition_key: str,
        run_id: str,
        base_partition: str,
        changed_keys: Mapping[str, frozenset[str]],
        fresh: bool,
    ) -> tuple[int, int]:
        """Give ``partition_key`` ``base_partition``'s decision of every candidate whose live
        bucket row was routed, by ``base_partition`` or before, from the inputs it has now,
        and none of whose keys is in ``changed_keys`` (see ``apac_routing_inputs``). The copy
        is not a move. Only what differs from the day's decision is written; ``fresh`` (the
        day is new and follows ``base_partition`` directly) means every tenant's decision of
        the day is still the base day's, so only those that were moves are looked at. The
        carried tenants stay listed for :meth:`undecided_candidates` in this transaction.
        Returns how many were carried, and how many decisions of the day that changed."""
        with driver_cursor(session) as cursor:
            # Whole days joined on the tenant and a version number: estimated at one row,
            # planned as index probes per tenant (docs/decisions/0061). A small day pays a
            # hash of the routing inputs instead, bounded by the quiet day's.
            with no_nested_loops(session):
                cursor.execute(self.carried_select(partition_key, base_partition, changed_keys))
            carried = max(cursor.rowcount, 0)
        analyze_transient(session, CARRIED)
        # The base day's decision, not a move, written by this run.
        not_moved = {"moved": sql.SQL("false"), "moved_from": sql.SQL("NULL")}
        values = [sql.SQL("b.tenant_id")]
        values += [
            not_moved.get(column, sql.SQL("b.{}").format(sql.Identifier(column)))
            for column in DECISION_VERSIONS.compared
        ]
        values += [sql.Literal(run_id), sql.SQL("now()"), sql.Literal(partition_key)]
        rows = sql.SQL(
            "SELECT {values} FROM {carried} k JOIN {base} b ON b.tenant_id = k.tenant_id{moves}"
        ).format(
            values=sql.SQL(", ").join(values),
            carried=sql.Identifier(CARRIED),
            base=decisions_on(base_partition),
            moves=sql.SQL(" WHERE b.moved") if fresh else sql.SQL(""),
        )
        written = write_day(
            session,
            DECISION_VERSIONS,
            day=partition_key,
            rows=rows,
            complete=False,
            finishes_day=False,
        )
        return carried, written

    def carried_select(
        self,
        partition_key: str,
        base_partition: str,
        changed_keys: Mapping[str, frozenset[str]],
    ) -> sql.Composed:
        """The statement listing :meth:`carry_forward`'s tenants (to run, or to ``EXPLAIN``)."""
        return sql.SQL(
            "CREATE TEMP TABLE {carried} ON COMMIT DROP AS SELECT c.tenant_id "
            "FROM {candidates} JOIN apac_routing_inputs r ON r.tenant_id = c.tenant_id "
            "JOIN {base} b ON b.tenant_id = c.tenant_id "
            "WHERE r.partition_key <= {base_key} AND {unchanged}"
        ).format(
            carried=sql.Identifier(CARRIED),
            candidates=candidates_with_answers(partition_key),
            base=decisions_on(base_partition),
            base_key=sql.Literal(base_partition),
            unchanged=unchanged_inputs(changed_keys),
        )

    def undecided_candidates(
        self, session: Session, *, partition_key: str
    ) -> dict[bool, list[str]]:
        """The partition's candidates :meth:`carry_forward` did not carry in this
        transaction, by ``forced_sales_owned``, in tenant-id order."""
        rows = session.execute(
            text(
                f"SELECT c.tenant_id, c.forced_sales_owned FROM {CANDIDATES_ON_P} c "
                f"WHERE NOT EXISTS (SELECT FROM {CARRIED} k WHERE k.tenant_id = c.tenant_id) "
                "ORDER BY c.tenant_id"
            ),
            {"p": partition_key},
        )
        undecided: dict[bool, list[str]] = {True: [], False: []}
        for tenant_id, forced in rows:
            undecided[bool(forced)].append(tenant_id)
        return undecided


class _DecisionVersions(SetBasedRepository[RoutingDecisionVersion]):
    """The decisions' versions: a first day copied straight in, a batch staged."""

    model_class = RoutingDecisionVersion


def unchanged_inputs(changed_keys: Mapping[str, frozenset[str]]) -> sql.Composable:
    """SQL true when the routing inputs ``r`` a live bucket row was written from name, by
    number, the day's candidate ``c`` and answer ``e``, none of its keys is in
    ``changed_keys``, and decision ``b`` is not a retirement.

    Versions are compared by their number, not their age: the base day's candidates and
    answers can be written again after that day was routed (enrichment run again for it),
    and one written again with other values has a new number, so a version older than the
    base day does not prove that routing saw it (docs/decisions/0058, 0060)."""
    touched = [
        sql.SQL("r.{} = ANY({}::text[])").format(sql.Identifier(column), sql.Literal(sorted(keys)))
        for column, keys in changed_keys.items()
        if keys
    ]
    condition = sql.SQL(
        "b.routing_rule <> {retired} AND r.candidate_version = c.version_number "
        "AND r.answer_version IS NOT DISTINCT FROM e.version_number"
    ).format(retired=sql.Literal(RETIRED_RULE))
    if touched:
        # A NULL key touches nothing (NULL OR false is NULL, hence the coalesce).
        condition = sql.SQL("{} AND NOT coalesce({}, false)").format(
            condition, sql.SQL(" OR ").join(touched)
        )
    return condition


class RoutingInputRepository(SetBasedRepository[RoutingInput]):
    """``apac_routing_inputs``: what each live bucket row was last routed from."""

    model_class = RoutingInput

    def record(
        self, session: Session, frame: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> int:
        """Upsert the inputs of the decided tenants of ``frame`` (``INPUT_COLUMNS``), inside
        the caller's transaction, the one that writes their bucket rows. When none of them
        has inputs recorded yet (a first run), the rows are copied straight in."""
        constants = {"partition_key": partition_key, "run_id": run_id}
        copied = self.copy_frame_if_new(session, frame, columns=INPUT_COLUMNS, constants=constants)
        if copied is not None:
            return copied
        staging = self.copy_frame_into_staging(session, frame, columns=INPUT_COLUMNS)
        return self.upsert_from_staging(
            session,
            staging,
            columns=INPUT_COLUMNS,
            conflict_columns=["tenant_id"],
            # Stamped on every decision, changed or not: the partition that last wrote the
            # bucket row is what a later day's copy checks.
            computed={"partition_key": sql.Literal(partition_key), "run_id": sql.Literal(run_id)},
        )

    def forget(self, session: Session, tenant_ids: list[str]) -> int:
        """Remove the inputs of tenants whose bucket row was retired: routed again, they are
        decided again."""
        if not tenant_ids:
            return 0
        with driver_cursor(session) as cursor:
            cursor.execute(
                "DELETE FROM apac_routing_inputs WHERE tenant_id = ANY(%s)", (tenant_ids,)
            )
            return max(cursor.rowcount, 0)


class RoutingStateRepository(BaseRepository[RoutingState]):
    """``apac_routing_states``: the rules' inputs each partition was routed with."""

    model_class = RoutingState

    def base_for(self, session: Session, *, partition_key: str) -> RoutingBase | None:
        """The newest partition routed before ``partition_key``, when its last run finished,
        owned the live buckets and its inputs are kept; else None (route every tenant). A
        run forgets its partition's state before it writes anything (:meth:`forget`), so a
        partition whose last run stopped half-way has decisions but no state: None."""
        newest = RoutingDecisionRepository().newest_day(session, before=partition_key)
        state = session.get(RoutingState, newest) if newest is not None else None
        if state is None or not state.live or state.rule_inputs is None:
            return None
        return RoutingBase(state.partition_key, RuleInputs.from_json(state.rule_inputs))

    def forget(self, session: Session, *, partition_key: str) -> None:
        """Drop the partition's state; :meth:`record` writes it again when the run ends."""
        session.execute(
            text("DELETE FROM apac_routing_states WHERE partition_key = :p"), {"p": partition_key}
        )

    def record(
        self,
        session: Session,
        *,
        partition_key: str,
        run_id: str,
        live: bool,
        inputs: RuleInputs,
        now: datetime,
    ) -> None:
        """Record the partition's rules' inputs; keep them in full for the two newest
        partitions only (a re-run of the newest needs the one before it)."""
        self.upsert(
            session,
            {
                "partition_key": partition_key,
                "run_id": run_id,
                "live": live,
                "regime": inputs.regime,
                "digest": inputs.digest,
                "rule_inputs": inputs.to_json(),
                "recorded_at": now,
            },
            conflict_columns=["partition_key"],
        )
        session.execute(
            text(
                "UPDATE apac_routing_states SET rule_inputs = NULL WHERE rule_inputs IS NOT NULL "
                "AND partition_key < (SELECT partition_key FROM apac_routing_states "
                "ORDER BY partition_key DESC OFFSET 1 LIMIT 1)"
            )
        )
