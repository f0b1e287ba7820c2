"""Repository of the scoring model versions the warehouse has scored with
(``apac_scoring_models``, docs/scoring.md, "Versions")."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.base import BaseRepository
from morpheus_pipelines.tenants.store.models import ScoringModelRecord


class ScoringModelRepository(BaseRepository[ScoringModelRecord]):
    model_class = ScoringModelRecord

    def record(
        self,
        session: Session,
        *,
        version: str,
        fingerprint: str,
        document: dict[str, Any],
        partition_key: str,
        run_id: str,
    ) -> ScoringModelRecord:
        """Record ``version`` with its numbers unless it is recorded already, and return the
        record: the first run's, whichever run wrote it (the caller compares fingerprints).
        Two runs recording one version at once both get the record that won: under READ
        COMMITTED the second ``INSERT`` waits for the first's transaction and then does
        nothing, and the ``SELECT``, a statement of its own, sees the committed row. (One
        statement, or REPEATABLE READ, would not see it.)"""
        session.execute(
            insert(ScoringModelRecord)
            .values(
                score_model_version=version,
                fingerprint=fingerprint,
                document=document,
                first_partition_key=partition_key,
                first_run_id=run_id,
            )
            .on_conflict_do_nothing(index_elements=["score_model_version"])
        )
        record = self.recorded(session, version=version)
        assert record is not None, "inserted or found above"
        return record

    def recorded(self, session: Session, *, version: str) -> ScoringModelRecord | None:
        """The record of ``version``, if a run has scored with it."""
        return session.get(ScoringModelRecord, version)

    def in_order(self, session: Session) -> list[ScoringModelRecord]:
        """Every recorded version, the first recorded first."""
        return list(
            session.scalars(
                select(ScoringModelRecord).order_by(
                    ScoringModelRecord.recorded_at, ScoringModelRecord.score_model_version
                )
            )
        )
