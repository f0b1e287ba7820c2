"""Repository of per-partition enrichment results."""

from __future__ import annotations

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


class EnrichedTenantRepository(SetBasedRepository[EnrichedTenant]):
    model_class = EnrichedTenant

    def upsert_chunk(
        self, session: Session, frame: pd.DataFrame, *, partition_key: str, run_id: str
    ) -> int:
        """Upsert one chunk of enrichment results; unchanged rows are not rewritten (their
        timing and run id stay those of the run that produced the values)."""
        staging = self.copy_frame_into_staging(session, frame, columns=ENRICHMENT_RESULT_COLUMNS)
        return self.upsert_from_staging(
            session,
            staging,
            columns=ENRICHMENT_RESULT_COLUMNS,
            conflict_columns=["partition_key", "tenant_id"],
            touch_columns=["enrichment_ms", "run_id"],
            computed={"partition_key": sql.Literal(partition_key), "run_id": sql.Literal(run_id)},
        )

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
