"""Repository of the routing decision record: why each tenant of a partition is where it is."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.base import BaseRepository
from morpheus_pipelines.platform.store.planner import analyze
from morpheus_pipelines.platform.store.set_based import SetBasedRepository
from morpheus_pipelines.tenants.rules.routing_inputs import TENANT_KEY_COLUMNS, RuleInputs
from morpheus_pipelines.tenants.rules.routing_plan import RoutingBase
from morpheus_pipelines.tenants.rules.vocabulary import RoutingRule
from morpheus_pipelines.tenants.store.day_tables import candidates_on, candidates_with_answers
from morpheus_pipelines.tenants.store.models import RoutingDecision, RoutingInput, RoutingState
from morpheus_pipelines.tenants.store.tenant_candidate import ROUTING_INPUT_FINGERPRINT

DECISION_COLUMNS = (
    "tenant_id",
    "source_type",
    "tenant_bucket",
    "routing_rule",
    "hubspot_company_id",
    "hubspot_match_method",
    "ambiguous_match",
    "ambiguous_key",
    "name_hint_company_id",
    "email_domain_class",
    "sales_owned_match",
    "priority_override",
    "priority_reason",
    "snapshot_status",
    "hubspot_sync_id",
    "hubspot_snapshot_synced_at",
    "moved",
    "moved_from",
    "rejection_reason",
)
# What a live run records of each tenant it decided (apac_routing_inputs).
INPUT_COLUMNS = ("tenant_id", "input_fingerprint", *TENANT_KEY_COLUMNS)
# What a decision carried forward to the next day takes from the run, not from the decision
# it copies (docs/pipeline.md, "Incremental routing").
RUN_EVIDENCE_COLUMNS = ("snapshot_status", "hubspot_sync_id", "hubspot_snapshot_synced_at")


# The partition ``:p``'s candidates, for the statements below bound by name.
CANDIDATES_ON_P = candidates_on(sql.SQL(":p")).as_string(None)

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
  (SELECT tenant_id, routing_rule FROM apac_routing_decisions WHERE partition_key = :p) d
ON d.tenant_id = c.tenant_id
WHERE d.tenant_id IS NULL OR (c.tenant_id IS NULL AND d.routing_rule <> 'retired')
"""
# A routed decision whose tenant is not (or not only, or a retired row) in the bucket it names.
DECISIONS_NOT_IN_BUCKET_SQL = """
SELECT count(*) FROM apac_routing_decisions d
LEFT JOIN apac_active_tenants a ON a.tenant_id = d.tenant_id AND a.retired_at IS NULL
LEFT JOIN apac_sales_owned_tenants s ON s.tenant_id = d.tenant_id AND s.retired_at IS NULL
WHERE d.partition_key = :p AND d.tenant_bucket IS NOT NULL AND d.routing_rule <> 'retired'
AND NOT ((d.tenant_bucket = 'active' AND a.tenant_id IS NOT NULL AND s.tenant_id IS NULL)
      OR (d.tenant_bucket = 'sales_owned' AND s.tenant_id IS NOT NULL AND a.tenant_id IS NULL))
"""
FORCED_NOT_SALES_OWNED_SQL = f"""
SELECT count(*) FROM {CANDIDATES_ON_P} c
WHERE c.tenant_id = ANY(:ids) AND c.rejection_reason IS NULL
AND NOT EXISTS (SELECT 1 FROM apac_sales_owned_tenants s WHERE s.tenant_id = c.tenant_id)
"""


class RoutingDecisionRepository(SetBasedRepository[RoutingDecision]):
    model_class = RoutingDecision

    def superseding_partition(self, session: Session, *, partition_key: str) -> str | None:
        """The newest routed partition when it is later than ``partition_key``, else None.

        The newest partition routing has decided owns the live bucket rows; a partition with a
        later one is history: a backfill or late re-run of it writes only its own
        partition-keyed rows (docs/partitions.md, "Live state and history")."""
        newest = session.scalar(select(func.max(RoutingDecision.partition_key)))
        return newest if newest is not None and newest > partition_key else None

    def delete_orphans(self, session: Session, *, partition_key: str, rerun: bool = True) -> int:
        """Delete the partition's decisions of tenants that are no longer its candidates (a
        re-run after the source changed); retirement rows are kept. Only a re-run can have
        any: ``rerun`` False skips the search (the statistics are refreshed either way)."""
        # Just bulk-written: fresh statistics keep this an anti-join, and keep the next
        # asset's statements on good plans (docs/performance.md).
        analyze(session, "apac_routing_decisions")
        if not rerun:
            return 0
        result = session.execute(
            text(
                "DELETE FROM apac_routing_decisions d WHERE d.partition_key = :p "
                "AND d.routing_rule <> :retired AND NOT EXISTS (SELECT FROM "
                f"{CANDIDATES_ON_P} c WHERE c.tenant_id = d.tenant_id)"
            ),
            {"p": partition_key, "retired": RETIRED_RULE},
        )
        return max(result.rowcount or 0, 0)

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
        """Upsert one decision per tenant of ``frame`` for the partition; returns rows written.

        A re-run that finds a tenant already in the bucket it moved to earlier for the same
        partition keeps ``moved``/``moved_from`` of that earlier decision, so re-running a
        partition reproduces the same record. When none of the tenants has a decision for the
        partition yet (a first run), the rows are copied straight in: the same rows, for about
        half the time.
        """
        copied = self.copy_run_if_new(
            session,
            frame,
            columns=DECISION_COLUMNS,
            partition_key=partition_key,
            run_id=run_id,
            stamped="decided_at",
        )
        if copied is not None:
            return copied
        staging = self.copy_frame_into_staging(session, frame, columns=DECISION_COLUMNS)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "UPDATE {s} s SET moved = true, moved_from = d.moved_from "
                    "FROM apac_routing_decisions d WHERE d.partition_key = {p} "
                    "AND d.tenant_id = s.tenant_id AND d.moved AND NOT s.moved "
                    "AND d.tenant_bucket IS NOT DISTINCT FROM s.tenant_bucket"
                ).format(s=sql.Identifier(staging), p=sql.Literal(partition_key))
            )
        return self.upsert_run_from_staging(
            session,
            staging,
            columns=DECISION_COLUMNS,
            partition_key=partition_key,
            run_id=run_id,
            stamped="decided_at",
        )

    def summary(self, session: Session, *, partition_key: str) -> dict[str, dict[str, int]]:
        """Counts per bucket, rule and match method, moves, ambiguity and free mail: one scan
        of the partition (``GROUPING SETS``)."""
        names = (
            ("by_bucket", "tenant_bucket"),
            ("by_source_type", "source_type"),
            ("by_rule", "routing_rule"),
            ("by_match_method", "hubspot_match_method"),
            ("by_moved_from", "moved_from"),
            ("by_email_domain_class", "email_domain_class"),
        )
        columns = ", ".join(column for _, column in names)
        sets = ", ".join(f"({column})" for _, column in names)
        rows = session.execute(
            text(
                f"SELECT {columns}, {', '.join(f'GROUPING({c})' for _, c in names)}, count(*), "
                "count(*) FILTER (WHERE ambiguous_match), count(*) FILTER (WHERE moved), "
                "count(*) FILTER (WHERE rejection_reason IS NOT NULL) "
                f"FROM apac_routing_decisions WHERE partition_key = :p "
                f"GROUP BY GROUPING SETS ({sets}, ())"
            ),
            {"p": partition_key},
        ).all()
        summary: dict[str, dict[str, int]] = {name: {} for name, _ in names}
        summary["totals"] = {"decisions": 0, "ambiguous": 0, "moved": 0, "rejected": 0}
        width = len(names)
        for row in rows:
            grouped = [i for i in range(width) if row[width + i] == 0]
            count = row[2 * width]
            if not grouped:
                summary["totals"] = {
                    "decisions": count,
                    "ambiguous": row[2 * width + 1],
                    "moved": row[2 * width + 2],
                    "rejected": row[2 * width + 3],
                }
            elif row[grouped[0]] is not None:
                summary[names[grouped[0]][0]][str(row[grouped[0]])] = count
        return summary

    def carry_forward(
        self,
        session: Session,
        *,
        partition_key: str,
        run_id: str,
        base_partition: str,
        changed_keys: Mapping[str, frozenset[str]],
        evidence: Mapping[str, object],
        source: Session | None = None,
    ) -> int:
        """Copy ``base_partition``'s decision of every candidate of ``partition_key`` whose
        live bucket row was routed, by ``base_partition`` or before, from the inputs it has
        now, and none of whose keys is in ``changed_keys`` (see ``apac_routing_inputs``). The
        copy takes the run's snapshot ``evidence`` and is not a move. ``source``: a second
        connection to stream the rows with, when the partition has no decisions yet
        (``write_selected``). Returns rows copied."""
        columns, rows = self.carry_forward_select(
            partition_key=partition_key,
            run_id=run_id,
            base_partition=base_partition,
            changed_keys=changed_keys,
            evidence=evidence,
        )
        return self.write_rows(
            session, columns=columns, rows=rows, partition_key=partition_key, source=source
        )

    def carry_forward_select(
        self,
        *,
        partition_key: str,
        run_id: str,
        base_partition: str,
        changed_keys: Mapping[str, frozenset[str]],
        evidence: Mapping[str, object],
    ) -> tuple[list[str], sql.Composed]:
        """The columns and rows of :meth:`carry_forward` (to write, or to ``EXPLAIN``)."""
        copied = [
            c for c in DECISION_COLUMNS if c not in (*RUN_EVIDENCE_COLUMNS, "moved", "moved_from")
        ]
        targets = ["partition_key", "tenant_id", "run_id", "decided_at", *copied[1:]]
        values = [sql.Literal(partition_key), sql.SQL("b.tenant_id"), sql.Literal(run_id)]
        values += [
            sql.SQL("now()"),
            *(sql.SQL("b.{}").format(sql.Identifier(c)) for c in copied[1:]),
        ]
        for column in RUN_EVIDENCE_COLUMNS:
            targets.append(column)
            values.append(sql.Literal(evidence[column]))
        targets += ["moved", "moved_from"]
        values += [sql.SQL("false"), sql.SQL("NULL")]
        rows = sql.SQL(
            "SELECT {values} "
            "FROM {candidates} JOIN apac_routing_inputs r ON r.tenant_id = c.tenant_id "
            "JOIN apac_routing_decisions b "
            "ON b.partition_key = {base} AND b.tenant_id = c.tenant_id "
            "WHERE r.partition_key <= {base} AND {unchanged}"
        ).format(
            values=sql.SQL(", ").join(values),
            candidates=candidates_with_answers(partition_key),
            base=sql.Literal(base_partition),
            unchanged=unchanged_inputs(changed_keys),
        )
        return targets, rows

    def undecided_candidates(
        self, session: Session, *, partition_key: str, run_id: str
    ) -> dict[bool, list[str]]:
        """The partition's candidates this run has not decided yet, by ``forced_sales_owned``,
        in tenant-id order."""
        rows = session.execute(
            text(
                f"SELECT c.tenant_id, c.forced_sales_owned FROM {CANDIDATES_ON_P} c "
                "WHERE NOT EXISTS (SELECT 1 FROM apac_routing_decisions d "
                "WHERE d.partition_key = :p AND d.tenant_id = c.tenant_id AND d.run_id = :run) "
                "ORDER BY c.tenant_id"
            ),
            {"p": partition_key, "run": run_id},
        )
        undecided: dict[bool, list[str]] = {True: [], False: []}
        for tenant_id, forced in rows:
            undecided[bool(forced)].append(tenant_id)
        return undecided


def unchanged_inputs(changed_keys: Mapping[str, frozenset[str]]) -> sql.Composable:
    """SQL true when the routing inputs ``r`` a live bucket row was written from are those
    candidate ``c`` with enrichment ``e`` have now, none of its keys is in ``changed_keys``,
    and decision ``b`` is not a retirement."""
    touched = [
        sql.SQL("r.{} = ANY({}::text[])").format(sql.Identifier(column), sql.Literal(sorted(keys)))
        for column, keys in changed_keys.items()
        if keys
    ]
    condition = sql.SQL(
        "b.routing_rule <> {retired} AND r.input_fingerprint = {fingerprint}"
    ).format(retired=sql.Literal(RETIRED_RULE), fingerprint=ROUTING_INPUT_FINGERPRINT)
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
        newest = session.scalar(
            select(func.max(RoutingDecision.partition_key)).where(
                RoutingDecision.partition_key < partition_key
            )
        )
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
