"""Repository of the routing decision record: why each tenant of a partition is where it is."""

from __future__ import annotations

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.models import RoutingDecision
from morpheus_pipelines.repositories.bulk import SetBasedRepository, driver_cursor

DECISION_COLUMNS = (
    "tenant_id",
    "source_type",
    "tenant_bucket",
    "routing_rule",
    "hubspot_company_id",
    "hubspot_match_method",
    "ambiguous_match",
    "ambiguous_key",
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


class RoutingDecisionRepository(SetBasedRepository[RoutingDecision]):
    model_class = RoutingDecision

    def record(
        self, session: Session, frame: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> int:
        """Upsert one decision per tenant of ``frame`` for the partition; returns rows written.

        A re-run that finds a tenant already in the bucket it moved to earlier for the same
        partition keeps ``moved``/``moved_from`` of that earlier decision, so re-running a
        partition reproduces the same record.
        """
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
        return self.upsert_from_staging(
            session,
            staging,
            columns=DECISION_COLUMNS,
            conflict_columns=["partition_key", "tenant_id"],
            touch_columns=["run_id", "decided_at"],
            computed={
                "partition_key": sql.Literal(partition_key),
                "run_id": sql.Literal(run_id),
                "decided_at": sql.SQL("now()"),
            },
        )

    def summary(self, session: Session, *, partition_key: str) -> dict[str, dict[str, int]]:
        """Counts per bucket, rule and match method, moves, ambiguity and free mail."""
        d = RoutingDecision
        where = d.partition_key == partition_key
        summary: dict[str, dict[str, int]] = {}
        for name, column in (
            ("by_bucket", d.tenant_bucket),
            ("by_rule", d.routing_rule),
            ("by_match_method", d.hubspot_match_method),
            ("by_moved_from", d.moved_from),
            ("by_email_domain_class", d.email_domain_class),
        ):
            rows = session.execute(select(column, func.count()).where(where).group_by(column)).all()
            summary[name] = {str(key): n for key, n in rows if key is not None}
        totals = session.execute(
            select(
                func.count(),
                func.count().filter(d.ambiguous_match),
                func.count().filter(d.moved),
                func.count().filter(d.rejection_reason.is_not(None)),
            ).where(where)
        ).one()
        summary["totals"] = {
            "decisions": totals[0],
            "ambiguous": totals[1],
            "moved": totals[2],
            "rejected": totals[3],
        }
        return summary
