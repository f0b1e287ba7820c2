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

from sqlalchemy import func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Lead, LeadDuplicate, LeadEnrichment, LeadScore
from morpheus_pipelines.crm.rules.lead_status import EnrichmentStatus, LeadStatus
from morpheus_pipelines.platform.store.base import BaseRepository


@dataclass(frozen=True)
class LeadToFollow:
    lead_id: uuid.UUID
    email: str | None
    phone: str | None
    campaign_count: int


@dataclass(frozen=True)
class EarlierLead:
    """The earlier open lead a new lead duplicates, and what it matched on."""

    lead_id: uuid.UUID
    subscription_id: uuid.UUID
    matched_on: str  # "email" or "phone"
    owner_sales_rep_id: int | None
    owner_hubspot_owner_id: str | None
    owner_is_fallback: bool


@dataclass(frozen=True)
class OwnerHandOver:
    """What giving a duplicate its earlier lead's owner changed: the owner the lead had, and
    whether the rep's load moved."""

    previous_sales_rep_id: int | None
    previous_hubspot_owner_id: str | None
    changed: bool


# The earliest open lead of the same subscription, created before the lead, with its
# (normalised) email or its (E.164) phone: the lead both are one person's.
_EARLIER_OPEN_LEAD = f"""
SELECT e.id, e."subscriptionId",
       CASE WHEN n.email IS NOT NULL AND e.email = n.email THEN 'email' ELSE 'phone' END,
       e."ownerSalesRepId", e."ownerHubspotOwnerId", e."ownerIsFallback"
FROM leads n JOIN leads e
  ON e."subscriptionId" = n."subscriptionId" AND e.status = '{LeadStatus.OPEN}'
 AND (e."createdAt", e.id) < (n."createdAt", n.id)
 AND ((n.email IS NOT NULL AND e.email = n.email) OR (n.phone IS NOT NULL AND e.phone = n.phone))
WHERE n.id = :lead_id
ORDER BY e."createdAt", e.id
LIMIT 1
"""

# The new lead takes the earlier lead's owner; the rep it was charged to gets the charge back
# and the earlier lead's owner is charged instead (a fallback owner carries no charge, and a
# lead whose load was already released carries none either).
_TAKE_EARLIER_OWNER = """
WITH before AS (
    SELECT n."ownerSalesRepId" AS rep, n."ownerHubspotOwnerId" AS hubspot_owner,
           n."ownerSalesRepId" IS NOT NULL AND NOT n."ownerIsFallback"
               AND n."loadReleasedAt" IS NULL AS counted,
           n."loadReleasedAt" IS NULL AS open_load
    FROM leads n WHERE n.id = :lead_id FOR UPDATE
), moved AS (
    UPDATE leads n SET "ownerSalesRepId" = e."ownerSalesRepId",
                       "ownerHubspotOwnerId" = e."ownerHubspotOwnerId",
                       "ownerIsFallback" = e."ownerIsFallback"
    FROM leads e, before b
    WHERE n.id = :lead_id AND e.id = :earlier_id
      AND n."ownerSalesRepId" IS DISTINCT FROM e."ownerSalesRepId"
    RETURNING e."ownerSalesRepId" AS rep, e."ownerIsFallback" AS fallback
), released AS (
    UPDATE sales_reps r SET "openLeads" = greatest(r."openLeads" - 1, 0)
    FROM before b, moved m WHERE r.id = b.rep AND b.counted
    RETURNING r.id
), charged AS (
    UPDATE sales_reps r SET "openLeads" = r."openLeads" + 1
    FROM before b, moved m WHERE r.id = m.rep AND NOT m.fallback AND b.open_load
    RETURNING r.id
)
SELECT b.rep, b.hubspot_owner, EXISTS (SELECT 1 FROM moved)
FROM before b
"""


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

    def earlier_open_lead(self, session: Session, lead_id: uuid.UUID) -> EarlierLead | None:
        """The subscription's earliest open lead created before ``lead_id`` with the same
        email or phone; never another subscription's."""
        row = session.execute(text(_EARLIER_OPEN_LEAD), {"lead_id": lead_id}).first()
        return EarlierLead(*row) if row is not None else None

    def take_earlier_owner(
        self, session: Session, lead_id: uuid.UUID, earlier_id: uuid.UUID
    ) -> OwnerHandOver:
        """Give the lead the earlier lead's owner, moving the open-load charge between the
        reps in the same statement (nothing moves when the owner is already the same)."""
        row = session.execute(
            text(_TAKE_EARLIER_OWNER), {"lead_id": lead_id, "earlier_id": earlier_id}
        ).one()
        return OwnerHandOver(*row)

    def show_form_on(self, session: Session, lead_id: uuid.UUID, earlier_id: uuid.UUID) -> int:
        """Put the lead's ``FORM`` activities on the earlier lead's timeline (one timeline per
        person); the count moved."""
        result = session.execute(
            text(
                'UPDATE activities SET "leadId" = :earlier_id, "updatedAt" = now() '
                "WHERE \"leadId\" = :lead_id AND type = 'FORM'"
            ),
            {"lead_id": lead_id, "earlier_id": earlier_id},
        )
        return result.rowcount

    def backlog(self, session: Session) -> dict[str, Any]:
        """What the sensor looks at: work waiting, and the newest lead."""
        return {
            "enrichment": len(self.awaiting_enrichment(session, limit=1)),
            "duplicates": len(self.awaiting_duplicate_check(session, limit=1)),
            "newest_lead": session.scalar(select(func.max(Lead.createdAt))),
        }
