"""Repository of per-partition enrichment results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import pandas as pd
from psycopg import sql
from sqlalchemy.orm import Session

from morpheus_pipelines.models import EnrichedTenant
from morpheus_pipelines.models.tenants import ENRICHMENT_COLUMNS
from morpheus_pipelines.repositories.set_based import (
    SetBasedRepository,
    analyze,
    driver_cursor,
)

ENRICHMENT_RESULT_COLUMNS = ("tenant_id", *ENRICHMENT_COLUMNS, "enrichment_ms")
# What reuse needs besides the result: when the service answered, and what it was asked.
STORED_COLUMNS = (*ENRICHMENT_RESULT_COLUMNS, "enriched_at", "input_fingerprint")
REUSABLE_STATUSES = ("enriched", "not_found")


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

    def reusable_results(
        self, session: Session, tenant_ids: Sequence[str], *, answered_since: datetime
    ) -> pd.DataFrame:
        """The newest answer per tenant given since ``answered_since`` in any partition
        (``STORED_COLUMNS``; an ``unavailable`` one is never reused), for a chunk's tenants."""
        columns = sql.SQL(", ").join(sql.Identifier(c) for c in STORED_COLUMNS)
        with driver_cursor(session) as cursor:
            cursor.execute(
                sql.SQL(
                    "SELECT DISTINCT ON (tenant_id) {columns} FROM apac_enriched_tenants "
                    "WHERE tenant_id = ANY(%s) AND enriched_at >= %s "
                    "AND enrichment_status = ANY(%s) "
                    "ORDER BY tenant_id, enriched_at DESC"
                ).format(columns=columns),
                (list(tenant_ids), answered_since, list(REUSABLE_STATUSES)),
            )
            rows = cursor.fetchall()
        return pd.DataFrame(rows, columns=list(STORED_COLUMNS))

    def delete_orphans(self, session: Session, *, partition_key: str) -> int:
        """Drop results of tenants that are no longer enrichable candidates of the partition."""
        analyze(session, "apac_enriched_tenants")
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
