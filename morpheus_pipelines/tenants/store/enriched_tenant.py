"""Repository of per-partition enrichment results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd
from psycopg import sql
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import driver_cursor
from morpheus_pipelines.platform.store.planner import analyze
from morpheus_pipelines.platform.store.set_based import SetBasedRepository
from morpheus_pipelines.tenants.rules.enrichment import REUSABLE_STATUSES
from morpheus_pipelines.tenants.store.models import EnrichedTenant
from morpheus_pipelines.tenants.store.models.tenants import ENRICHMENT_COLUMNS

ENRICHMENT_RESULT_COLUMNS = ("tenant_id", *ENRICHMENT_COLUMNS, "enrichment_ms")
# What reuse needs besides the result: when the service answered, and what it was asked.
STORED_COLUMNS = (*ENRICHMENT_RESULT_COLUMNS, "enriched_at", "input_fingerprint")


class EnrichedTenantRepository(SetBasedRepository[EnrichedTenant]):
    model_class = EnrichedTenant

    def upsert_chunk(
        self, session: Session, frame: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> int:
        """Upsert one chunk of enrichment results; unchanged rows are not rewritten (their
        timing and run id stay those of the run that produced the values)."""
        staging = self.copy_frame_into_staging(session, frame, columns=STORED_COLUMNS)
        return self.upsert_from_staging(
            session,
            staging,
            columns=STORED_COLUMNS,
            conflict_columns=["partition_key", "tenant_id"],
            touch_columns=["enrichment_ms", "run_id"],
            computed={"partition_key": sql.Literal(partition_key), "run_id": sql.Literal(run_id)},
        )

    def reusable_answers(
        self,
        session: Session,
        wanted: Sequence[tuple[str, str]],
        *,
        answered_after: datetime,
    ) -> dict[str, dict[str, Any]]:
        """For each ``(tenant id, input fingerprint)``, the newest ``enriched`` or
        ``not_found`` answer given for exactly those inputs after ``answered_after``, in any
        partition: one probe per tenant into the partial index
        ``ix_apac_enriched_tenants_reuse``."""
        if not wanted:
            return {}
        tenants, fingerprints = zip(*wanted, strict=True)
        columns = sql.SQL(", ").join(sql.SQL("e.") + sql.Identifier(c) for c in STORED_COLUMNS)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT {columns} FROM unnest(%s::text[], %s::text[]) AS w(tenant_id, fp) "
                    "CROSS JOIN LATERAL (SELECT * FROM apac_enriched_tenants e "
                    "  WHERE e.tenant_id = w.tenant_id AND e.enrichment_status = ANY(%s) "
                    "    AND e.enriched_at > %s AND e.input_fingerprint = w.fp "
                    "  ORDER BY e.enriched_at DESC LIMIT 1) AS e"
                ).format(columns=columns),
                (list(tenants), list(fingerprints), list(REUSABLE_STATUSES), answered_after),
            )
            return {row[0]: dict(zip(STORED_COLUMNS, row, strict=True)) for row in cursor}

    def carry_forward(
        self,
        session: Session,
        *,
        partition_key: str,
        run_id: str,
        base_partition: str,
        answered_after: datetime,
        fingerprint_prefix: str,
        source: Session | None = None,
    ) -> int:
        """Copy ``base_partition``'s answer for every enrichable candidate of
        ``partition_key`` asked about with the same name and email that day, when the answer
        is reusable (``enriched``/``not_found``, given after ``answered_after``, its
        fingerprint made with today's domain lists: ``fingerprint_prefix``). A copied answer
        is a reused one (no errors, its original time and duration). ``source``: a second
        connection to stream the rows with, when the partition has no rows yet
        (``write_selected``). Returns rows copied."""
        copied = [c for c in STORED_COLUMNS if c not in ("tenant_id", "enrichment_error_count")]
        rows = sql.SQL(
            "SELECT {p}, c.tenant_id, {run}, 0, {values} FROM apac_tenant_candidates c "
            "JOIN apac_tenant_candidates cb "
            "ON cb.partition_key = {base} AND cb.tenant_id = c.tenant_id "
            "JOIN apac_enriched_tenants eb "
            "ON eb.partition_key = {base} AND eb.tenant_id = c.tenant_id "
            "WHERE c.partition_key = {p} AND NOT c.forced_sales_owned "
            "AND c.rejection_reason IS NULL "
            "AND (c.name, c.email) IS NOT DISTINCT FROM (cb.name, cb.email) "
            "AND eb.enrichment_status = ANY({reusable}::text[]) AND eb.enriched_at > {after} "
            "AND starts_with(eb.input_fingerprint, {prefix})"
        ).format(
            p=sql.Literal(partition_key),
            run=sql.Literal(run_id),
            values=sql.SQL(", ").join(sql.SQL("eb.{}").format(sql.Identifier(c)) for c in copied),
            base=sql.Literal(base_partition),
            reusable=sql.Literal(list(REUSABLE_STATUSES)),
            after=sql.Literal(answered_after),
            prefix=sql.Literal(fingerprint_prefix),
        )
        return self.write_rows(
            session,
            columns=["partition_key", "tenant_id", "run_id", "enrichment_error_count", *copied],
            rows=rows,
            partition_key=partition_key,
            source=source,
        )

    def status_counts(self, session: Session, *, partition_key: str, run_id: str) -> dict[str, int]:
        """The partition's answers from this run, per status."""
        e = EnrichedTenant
        rows = session.execute(
            select(e.enrichment_status, func.count())
            .where(e.partition_key == partition_key, e.run_id == run_id)
            .group_by(e.enrichment_status)
        )
        return {status: n for status, n in rows}

    def unanswered_candidates(
        self, session: Session, *, partition_key: str, run_id: str
    ) -> list[str]:
        """The partition's enrichable candidates without an answer from this run, in
        tenant-id order."""
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT c.tenant_id FROM apac_tenant_candidates c WHERE c.partition_key = {p} "
                    "AND NOT c.forced_sales_owned AND c.rejection_reason IS NULL "
                    "AND NOT EXISTS (SELECT 1 FROM apac_enriched_tenants e "
                    "WHERE e.partition_key = c.partition_key AND e.tenant_id = c.tenant_id "
                    "AND e.run_id = {run}) ORDER BY c.tenant_id"
                ).format(p=sql.Literal(partition_key), run=sql.Literal(run_id))
            )
            return [tenant_id for (tenant_id,) in cursor]

    def delete_orphans(self, session: Session, *, partition_key: str, rerun: bool = True) -> int:
        """Drop results of tenants that are no longer enrichable candidates of the partition.
        Only a re-run can leave any: ``rerun`` False skips the search (the statistics are
        refreshed either way)."""
        analyze(session, "apac_enriched_tenants")
        if not rerun:
            return 0
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "DELETE FROM apac_enriched_tenants e WHERE e.partition_key = {p} "
                    "AND NOT EXISTS (SELECT 1 FROM apac_tenant_candidates c "
                    "WHERE c.partition_key = e.partition_key AND c.tenant_id = e.tenant_id "
                    "AND NOT c.forced_sales_owned AND c.rejection_reason IS NULL)"
                ).format(p=sql.Literal(partition_key))
            )
            return max(cursor.rowcount, 0)
