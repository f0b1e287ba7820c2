"""Repositories of the two mutually exclusive tenant buckets (docs/pipeline.md).

Routing writes a batch of tenants in one transaction (docs/reliability.md):

1. upsert each tenant into its destination table — source, enrichment and routing columns;
2. when the tenant comes from the other table, carry its score and manual tracking fields
   (``total_score``, priority fields, ``track_step``, ``track_update_time``,
   ``startup_program``) into the new row;
3. delete it from the other table.

A transaction-level advisory lock serialises these batch transactions across runs and
processes, so two runs of one partition, or two partitions backfilled at once, never
interleave their deletes and upserts (no deadlock, and the tables stay disjoint after every
commit). Rows whose values did not change are not rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.planner import analyze_transient
from morpheus_pipelines.platform.store.set_based import (
    SetBasedRepository,
    transaction_start,
    write_frame,
)
from morpheus_pipelines.tenants.store.day_tables import candidates_on
from morpheus_pipelines.tenants.store.models import ActiveTenant, SalesOwnedTenant
from morpheus_pipelines.tenants.store.models.tenants import ENRICHMENT_COLUMNS

ROUTING_LOCK_KEY = 0x726F757465  # "route"

# Written by routing on every routed tenant (the staging frame carries these + tenant_bucket).
ROUTED_COLUMNS = (
    "tenant_id",
    "custom_id",
    "name",
    "email",
    "sales_owner_email",
    "status",
    "source_type",
    "signup_at",
    "plan",
    "seats",
    "active_users_30d",
    "last_active_at",
    *ENRICHMENT_COLUMNS,
    "priority_override",
    "hubspot_target",
    "hubspot_company_id",
    "hubspot_match_method",
    "hubspot_snapshot_synced_at",
    "hubspot_sync_id",
    "hubspot_snapshot_status",
    "routing_rule",
)
# The snapshot a row's routing was written with: on every row, rewritten with any other change
# (or when it appears or disappears), but a new sync id alone does not rewrite a million rows.
EVIDENCE_COLUMNS = ("hubspot_snapshot_synced_at", "hubspot_sync_id", "hubspot_snapshot_status")
# Bookkeeping that is written with a change but is not a change by itself.
TOUCH_COLUMNS = ("partition_key", "run_id", "updated_at")
# Carried from the other table when a tenant moves (docs/reliability.md).
CARRIED_COLUMNS = (
    "total_score",
    "calculated_priority",
    "priority",
    "priority_reason",
    "scored_at",
    "previous_priority",
    "priority_changed_partition",
    "track_step",
    "track_update_time",
    "startup_program",
)
BUCKET_TABLES = {"active": "apac_active_tenants", "sales_owned": "apac_sales_owned_tenants"}


@dataclass(frozen=True)
class MoveResult:
    written: dict[str, int]
    moved_from: dict[str, str]  # tenant_id -> bucket it left


class ActiveTenantRepository(SetBasedRepository[ActiveTenant]):
    model_class = ActiveTenant


class SalesOwnedTenantRepository(SetBasedRepository[SalesOwnedTenant]):
    model_class = SalesOwnedTenant


class TenantBucketRepository:
    """Set-based writes across both bucket tables (one repository per pair of tables)."""

    active = ActiveTenantRepository()
    sales_owned = SalesOwnedTenantRepository()

    def lock_routing(self, session: Session) -> None:
        """Serialise bucket writes for the rest of the caller's transaction."""
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": ROUTING_LOCK_KEY})

    def move_batch(
        self,
        session: Session,
        frame: pd.DataFrame,
        *,
        partition_key: str,
        run_id: str,
        forced_priority: str | None = None,
    ) -> MoveResult:
        """Route one batch inside the caller's transaction (see module docstring).

        ``frame`` has ``ROUTED_COLUMNS`` plus ``tenant_bucket``. ``forced_priority`` sets
        ``priority`` directly (the forced Sales-owned fast path keeps ``P0``) instead of
        carrying it.
        """
        self.lock_routing(session)
        if self._key_range_is_free(session, frame["tenant_id"]):
            return MoveResult(
                self._copy_new_rows(session, frame, partition_key, run_id, forced_priority), {}
            )
        staging = self.active.copy_frame_into_staging(
            session, frame, columns=ROUTED_COLUMNS, extra_columns={"tenant_bucket": "text"}
        )
        moved_from: dict[str, str] = {}
        written: dict[str, int] = {}
        for bucket, table in BUCKET_TABLES.items():
            other = BUCKET_TABLES["sales_owned" if bucket == "active" else "active"]
            written[bucket] = self._upsert_bucket(
                session, staging, bucket, table, other, partition_key, run_id, forced_priority
            )
        for bucket in BUCKET_TABLES:
            other_bucket = "sales_owned" if bucket == "active" else "active"
            with driver_cursor(session) as cursor:
                cursor.execute(
                    sql.SQL(
                        "DELETE FROM {other} o USING {s} s WHERE o.tenant_id = s.tenant_id "
                        "AND s.tenant_bucket = {bucket} RETURNING o.tenant_id"
                    ).format(
                        other=sql.Identifier(BUCKET_TABLES[other_bucket]),
                        s=sql.Identifier(staging),
                        bucket=sql.Literal(bucket),
                    )
                )
                for (tenant_id,) in cursor.fetchall():
                    moved_from[tenant_id] = other_bucket
        return MoveResult(written, moved_from)

    def _key_range_is_free(self, session: Session, tenant_ids: pd.Series) -> bool:
        """Whether neither table has a row between the least and the greatest of
        ``tenant_ids`` (in the database's collation): then no tenant of the batch is in
        either table, and nothing moves or is carried. Under the routing lock, it stays so
        until the transaction ends."""
        if tenant_ids.empty:
            return False
        free = sql.SQL(" AND ").join(
            sql.SQL(
                "NOT EXISTS (SELECT 1 FROM {} t WHERE t.tenant_id BETWEEN r.lo AND r.hi)"
            ).format(sql.Identifier(table))
            for table in BUCKET_TABLES.values()
        )
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT {free} FROM (SELECT min(k) AS lo, max(k) AS hi "
                    "FROM unnest(%s::text[]) AS k) r"
                ).format(free=free),
                (tenant_ids.tolist(),),
            )
            return bool(cursor.fetchone()[0])

    def _copy_new_rows(
        self,
        session: Session,
        frame: pd.DataFrame,
        partition_key: str,
        run_id: str,
        forced_priority: str | None,
    ) -> dict[str, int]:
        """``COPY`` a batch none of whose tenants is in either table straight into its
        bucket table: the rows the upsert would insert (entered as ``new``, nothing carried),
        without a staging table or a conflict check (a first run's batches)."""
        constants: dict[str, object] = {
            "partition_key": partition_key,
            "run_id": run_id,
            "updated_at": transaction_start(session),
            "bucket_entered_partition": partition_key,
            "entered_from": "new",
        }
        if forced_priority:
            constants["priority"] = forced_priority
        written = {}
        for bucket, table in BUCKET_TABLES.items():
            rows = frame.loc[frame["tenant_bucket"] == bucket, list(ROUTED_COLUMNS)]
            write_frame(session, table, rows.assign(**constants), [*ROUTED_COLUMNS, *constants])
            written[bucket] = len(rows)
        return written

    def _upsert_bucket(
        self,
        session: Session,
        staging: str,
        bucket: str,
        table: str,
        other: str,
        partition_key: str,
        run_id: str,
        forced_priority: str | None,
    ) -> int:
        ident = sql.Identifier
        carried = [c for c in CARRIED_COLUMNS if not (forced_priority and c == "priority")]
        targets = [*ROUTED_COLUMNS, *TOUCH_COLUMNS, *carried]
        values = [sql.SQL("s.{}").format(ident(c)) for c in ROUTED_COLUMNS]
        values += [sql.Literal(partition_key), sql.Literal(run_id), sql.SQL("now()")]
        values += [sql.SQL("o.{}").format(ident(c)) for c in carried]
        # Set when the row is created, never on update: when and from where it entered.
        other_bucket = "sales_owned" if bucket == "active" else "active"
        targets += ["bucket_entered_partition", "entered_from"]
        values += [
            sql.Literal(partition_key),
            sql.SQL("CASE WHEN o.tenant_id IS NULL THEN 'new' ELSE {} END").format(
                sql.Literal(other_bucket)
            ),
        ]
        # Routed again: no longer retired (a retired row is rewritten even when nothing else
        # changed, so that it comes back).
        targets.append("retired_at")
        values.append(sql.SQL("NULL::timestamptz"))
        updated = [c for c in ROUTED_COLUMNS if c != "tenant_id"] + ["retired_at"]
        if forced_priority:
            targets.append("priority")
            values.append(sql.Literal(forced_priority))
            updated.append("priority")
        compared = [c for c in updated if c not in EVIDENCE_COLUMNS]
        statement = sql.SQL(
            "INSERT INTO {table} AS t ({targets}) "
            "SELECT {values} FROM {s} s LEFT JOIN {other} o ON o.tenant_id = s.tenant_id "
            "WHERE s.tenant_bucket = {bucket} ORDER BY s.tenant_id "
            "ON CONFLICT (tenant_id) DO UPDATE SET {assignments} "
            "WHERE ({old}) IS DISTINCT FROM ({new}) "
            "OR (t.hubspot_sync_id IS NULL) <> (EXCLUDED.hubspot_sync_id IS NULL)"
        ).format(
            table=ident(table),
            targets=sql.SQL(", ").join(map(ident, targets)),
            values=sql.SQL(", ").join(values),
            s=ident(staging),
            other=ident(other),
            bucket=sql.Literal(bucket),
            assignments=sql.SQL(", ").join(
                sql.SQL("{c} = EXCLUDED.{c}").format(c=ident(c)) for c in (*updated, *TOUCH_COLUMNS)
            ),
            old=sql.SQL(", ").join(sql.SQL("t.{}").format(ident(c)) for c in compared),
            new=sql.SQL(", ").join(sql.SQL("EXCLUDED.{}").format(ident(c)) for c in compared),
        )
        with driver_cursor(session) as cursor:
            cursor.execute(statement)
            return max(cursor.rowcount, 0)

    def retire_unselected(
        self, session: Session, *, partition_key: str, run_id: str
    ) -> pd.DataFrame:
        """Mark retired (``retired_at = now()``) every bucket row that is not a routable
        candidate of the partition, inside the caller's transaction; returns the newly retired
        tenants (``tenant_id``, ``source_type``, ``tenant_bucket``). Nothing is deleted: the
        row keeps its score and tracking fields, and routing it again clears ``retired_at``.
        A row this run wrote for this partition is one of its routable candidates (rejected
        ones get no bucket row), so only the others are looked up: on a first day, none.
        Both buckets' rows are looked up in one pass, so the day's candidates are read (and
        hashed) once."""
        self.lock_routing(session)
        unselected = sql.Identifier("_unselected_bucket_rows")
        live_rows = sql.SQL(" UNION ALL ").join(
            sql.SQL(
                "SELECT tenant_id, {bucket} AS tenant_bucket, partition_key, run_id "
                "FROM {table} WHERE retired_at IS NULL"
            ).format(bucket=sql.Literal(bucket), table=sql.Identifier(table))
            for bucket, table in BUCKET_TABLES.items()
        )
        retired = []
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "CREATE TEMP TABLE {unselected} ON COMMIT DROP AS "
                    "SELECT b.tenant_id, b.tenant_bucket FROM ({live_rows}) b "
                    "WHERE (b.partition_key, b.run_id) IS DISTINCT FROM ({p}, {run}) "
                    "AND NOT EXISTS (SELECT FROM {candidates} c WHERE c.tenant_id = b.tenant_id "
                    "AND c.rejection_reason IS NULL)"
                ).format(
                    unselected=unselected,
                    live_rows=live_rows,
                    candidates=candidates_on(partition_key),
                    p=sql.Literal(partition_key),
                    run=sql.Literal(run_id),
                )
            )
            if cursor.rowcount:
                # Temporary tables are never analysed by autovacuum; a day that retires many
                # joins them by estimate.
                analyze_transient(session, "_unselected_bucket_rows")
                for bucket, table in BUCKET_TABLES.items():
                    cursor.execute(
                        sql.SQL(
                            "UPDATE {table} t SET retired_at = now(), updated_at = now(), "
                            "partition_key = {p}, run_id = {run} FROM {unselected} u "
                            "WHERE u.tenant_id = t.tenant_id AND u.tenant_bucket = {bucket} "
                            "RETURNING t.tenant_id, t.source_type"
                        ).format(
                            table=sql.Identifier(table),
                            unselected=unselected,
                            bucket=sql.Literal(bucket),
                            p=sql.Literal(partition_key),
                            run=sql.Literal(run_id),
                        )
                    )
                    retired += [(tenant_id, source, bucket) for tenant_id, source in cursor]
        return pd.DataFrame(retired, columns=["tenant_id", "source_type", "tenant_bucket"])

    def overlap_count(self, session: Session) -> int:
        """Tenants present in both tables (must always be 0)."""
        return (
            session.scalar(
                select(func.count())
                .select_from(ActiveTenant)
                .join(SalesOwnedTenant, SalesOwnedTenant.tenant_id == ActiveTenant.tenant_id)
            )
            or 0
        )

    def bucket_of(self, session: Session, tenant_ids: Sequence[str]) -> dict[str, str]:
        """Which bucket each of ``tenant_ids`` is in now."""
        found: dict[str, str] = {}
        for bucket, model in (("active", ActiveTenant), ("sales_owned", SalesOwnedTenant)):
            for (tenant_id,) in session.execute(
                select(model.tenant_id).where(model.tenant_id.in_(list(tenant_ids)))
            ):
                found[tenant_id] = bucket
        return found
