"""Repository of the slow path after a lead is created (docs/leads.md, "After creation"): its
enrichment, score and duplicate check. Not among the 16 exports of
``morpheus_pipelines.crm.repositories``; import it from this module.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Lead, LeadDuplicate, LeadEnrichment, LeadScore
from morpheus_pipelines.crm.rules.lead_status import EnrichmentStatus
from morpheus_pipelines.platform.store.base import BaseRepository


@dataclass(frozen=True)
class LeadToFollow:
    lead_id: uuid.UUID
    email: str | None
    phone: str | None
    campaign_count: int


class LeadFollowUpRepository(BaseRepository[LeadEnrichment]):
    """The slow path's reads and writes (docs/leads.md, "After creation"). Every write is an
    upsert keyed by the lead, so a re-run changes nothing that is already right; none of
    them touches the lead's owner."""

    model_class = LeadEnrichment

    def _leads(self, *conditions: Any, limit: int) -> Any:
        return (
            select(Lead.id, Lead.email, Lead.phone, func.cardinality(Lead.campaignIds))
            .where(*conditions)
            .order_by(Lead.createdAt, Lead.id)
            .limit(limit)
        )

    def awaiting_enrichment(
        self, session: Session, *, limit: int, tried_before: datetime | None = None
    ) -> list[LeadToFollow]:
        """Leads never enriched, or whose last attempt (before ``tried_before``, so a run
        does not ask twice) found the service unavailable."""
        settled = LeadEnrichment.status != EnrichmentStatus.UNAVAILABLE
        if tried_before is not None:
            settled = settled | (LeadEnrichment.enrichedAt >= tried_before)
        done = select(LeadEnrichment.leadId).where(LeadEnrichment.leadId == Lead.id, settled)
        statement = self._leads(~done.exists(), limit=limit)
        return [LeadToFollow(*row) for row in session.execute(statement)]

    def save_enrichments(self, session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        statement = pg_insert(LeadEnrichment).values([dict(r) for r in rows])
        columns = [c for c in rows[0] if c != "leadId"]
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["leadId"],
                set_={c: statement.excluded[c] for c in columns} | {"enrichedAt": func.now()},
            )
        )

    def awaiting_score(self, session: Session, *, limit: int) -> list[tuple[Any, ...]]:
        """Enriched leads without a score, or scored before their latest enrichment:
        ``(lead id, phone, campaign count, status, employee count)``."""
        statement = (
            select(
                Lead.id,
                Lead.phone,
                func.cardinality(Lead.campaignIds),
                LeadEnrichment.status,
                LeadEnrichment.employeeCount,
            )
            .join(LeadEnrichment, LeadEnrichment.leadId == Lead.id)
            .outerjoin(LeadScore, LeadScore.leadId == Lead.id)
            .where((LeadScore.leadId.is_(None)) | (LeadScore.scoredAt < LeadEnrichment.enrichedAt))
            .order_by(Lead.createdAt, Lead.id)
            .limit(limit)
        )
        return [tuple(row) for row in session.execute(statement)]

    def save_scores(self, session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        statement = pg_insert(LeadScore).values([dict(r) for r in rows])
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["leadId"],
                set_={
                    "score": statement.excluded.score,
                    "reasons": statement.excluded.reasons,
                    "scoredAt": func.now(),
                },
            )
        )

    def awaiting_duplicate_check(self, session: Session, *, limit: int) -> list[LeadToFollow]:
        checked = select(LeadDuplicate.leadId).where(LeadDuplicate.leadId == Lead.id)
        statement = self._leads(~checked.exists(), limit=limit)
        return [LeadToFollow(*row) for row in session.execute(statement)]

    def save_duplicates(self, session: Session, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            session.execute(
                pg_insert(LeadDuplicate)
                .values([dict(r) for r in rows])
                .on_conflict_do_nothing(index_elements=["leadId"])
            )

    def backlog(self, session: Session) -> dict[str, Any]:
        """What the sensor looks at: work waiting, and the newest lead."""
        return {
            "enrichment": len(self.awaiting_enrichment(session, limit=1)),
            "duplicates": len(self.awaiting_duplicate_check(session, limit=1)),
            "newest_lead": session.scalar(select(func.max(Lead.createdAt))),
        }
