"""Repository of per-partition enrichment results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

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
