"""Repository of the first-touch SLA (docs/ownership.md, "First-touch SLA"): the open leads
whose first touch is due, the touches that met it, the misses and their one re-route, and
the figures of the SLA report. Not among the 16 exports of
``morpheus_pipelines.crm.repositories``; import it from this module.

A first touch is an outbound activity of the lead, since its creation, by its owner: the
activity's ``hubspot_owner_id`` is the lead's owner, so neither the AI dialer (whose calls
carry its sentinel owner) nor an automation (which carries none) counts.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Lead, SalesRep
from morpheus_pipelines.crm.repositories.leads import Candidate, claim_statement
from morpheus_pipelines.crm.repositories.routing_directory import RoutingDirectoryRepository
from morpheus_pipelines.crm.rules.lead_status import LeadStatus
from morpheus_pipelines.platform.store.base import BaseRepository

# Pending: a deadline, neither met nor missed (the partial index ix_leads_first_touch_due).
_PENDING = (
    '"firstTouchDueAt" IS NOT NULL AND "firstTouchAt" IS NULL AND "firstTouchMissedAt" IS NULL'
)
_FIRST_TOUCH = """(
    SELECT min(a."occurredAt") FROM activities AS a
    WHERE a."leadId" = l.id AND lower(a.direction) = 'outbound'
      AND a."occurredAt" >= l."createdAt"
      AND a.metadata ->> 'hubspot_owner_id' = l."ownerHubspotOwnerId"
)"""
# Every pending open lead with a touch: met (and, touched after its deadline but before a
# sweep saw the miss, missed too, without a re-route: its owner is on it).
_RECORD_TOUCHES = text(f"""
WITH touched AS (
    SELECT l.id, {_FIRST_TOUCH} AS at
    FROM leads AS l
    WHERE {_PENDING.replace('"first', 'l."first')} AND l.status = 'open'
      AND l."ownerHubspotOwnerId" IS NOT NULL
    FOR UPDATE OF l SKIP LOCKED
)
UPDATE leads SET "firstTouchAt" = touched.at, "firstTouchSalesRepId" = leads."ownerSalesRepId",
    "firstTouchMissedAt" = CASE WHEN touched.at > leads."firstTouchDueAt" THEN :now END
FROM touched
WHERE leads.id = touched.id AND touched.at IS NOT NULL
RETURNING leads.id, touched.at <= leads."firstTouchDueAt" AS met
""")

_directory = RoutingDirectoryRepository()


@dataclass(frozen=True)
class MissedLead:
    """A lead whose deadline passed untouched, as it was before the miss was recorded."""

    lead_id: uuid.UUID
    subscription_id: uuid.UUID
    pool_id: int | None
    owner_sales_rep_id: int | None
    owner_hubspot_owner_id: str | None
    owner_is_fallback: bool
    owner_set_by_hand: bool
    load_released: bool


@dataclass(frozen=True)
class SlaRow:
    """One rep's (or pool's) leads whose deadline fell in the window."""

    subscription_id: uuid.UUID
    pool: str
    sales_rep_id: int | None
    hubspot_owner_id: str | None
    due: int
    met: int
    missed: int


class FirstTouchRepository(BaseRepository[Lead]):
    model_class = Lead

    def record_touches(self, session: Session, *, now: datetime) -> tuple[int, int]:
        """``(met, touched late)`` of the pending leads whose owner has touched them."""
        rows = session.execute(_RECORD_TOUCHES, {"now": now}).all()
        met = sum(1 for row in rows if row.met)
        return met, len(rows) - met

    def take_missed(self, session: Session, *, now: datetime, limit: int) -> list[MissedLead]:
        """Up to ``limit`` pending open leads past their deadline, locked (skipping leads
        another sweep or a request holds)."""
        statement = (
            select(Lead)
            .where(
                text(_PENDING),
                Lead.firstTouchDueAt <= now,
                Lead.status == LeadStatus.OPEN,
                Lead.ownerHubspotOwnerId.is_not(None),
            )
            .order_by(Lead.firstTouchDueAt)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        return [
            MissedLead(
                lead.id,
                lead.subscriptionId,
                lead.poolId,
                lead.ownerSalesRepId,
                lead.ownerHubspotOwnerId,
                lead.ownerIsFallback,
                lead.ownerSetByHand,
                lead.loadReleasedAt is not None,
            )
            for lead in session.scalars(statement)
        ]

    def claim_other_owner(self, session: Session, lead: MissedLead) -> Candidate | None:
        """Charge the next assignable rep of the lead's pool, never its current owner, by the
        claim statement of intake (available now, least loaded); ``None`` when nobody else
        is assignable."""
        candidates = [
            c
            for c in _directory.live_candidates(session, lead.subscription_id, lead.pool_id)
            if c.sales_rep_id != lead.owner_sales_rep_id
        ]
        if not candidates:
            return None
        params = {
            "ids": [c.sales_rep_id for c in candidates],
            "weights": [c.weight for c in candidates],
        }
        for skip_locked in (True, False):  # busy rows skipped first; wait only if all busy
            row = session.execute(claim_statement(skip_locked=skip_locked), params).first()
            if row is not None:
                return Candidate(row.id, row.hubspotOwnerId)
        return None

    def record_miss(
        self, session: Session, lead: MissedLead, *, now: datetime, new_owner: Candidate | None
    ) -> None:
        """Record the miss; with a new owner, move the lead to it and give the old owner's
        load back (a fallback lead never counted, a released one no longer does)."""
        values: dict[str, object] = {
            "firstTouchMissedAt": now,
            "firstTouchSalesRepId": lead.owner_sales_rep_id,
        }
        if new_owner is not None:
            values |= {
                "ownerSalesRepId": new_owner.sales_rep_id,
                "ownerHubspotOwnerId": new_owner.hubspot_owner_id,
                "ownerIsFallback": False,
                "loadReleasedAt": None,
            }
        session.execute(update(Lead).where(Lead.id == lead.lead_id).values(**values))
        charged = not lead.owner_is_fallback and not lead.load_released
        if new_owner is not None and charged and lead.owner_sales_rep_id is not None:
            session.execute(
                update(SalesRep)
                .where(SalesRep.id == lead.owner_sales_rep_id, SalesRep.openLeads > 0)
                .values(openLeads=SalesRep.openLeads - 1)
            )

    def sla_rows(self, session: Session, *, since: datetime, until: datetime) -> list[SlaRow]:
        """Per subscription, pool and rep: the leads whose deadline fell in ``[since, until)``,
        met and missed. A judged lead counts for the rep who met or missed it (a missed lead
        has moved on), a pending one for its owner."""
        rows = session.execute(
            text("""
            SELECT l."subscriptionId", coalesce(p.name, 'default') AS pool,
                   r.id, r."hubspotOwnerId",
                   count(*) AS due,
                   count(*) FILTER (WHERE l."firstTouchAt" <= l."firstTouchDueAt") AS met,
                   count(*) FILTER (WHERE l."firstTouchMissedAt" IS NOT NULL) AS missed
            FROM leads AS l
            LEFT JOIN routing_pools AS p ON p.id = l."poolId"
            LEFT JOIN sales_reps AS r
                ON r.id = coalesce(l."firstTouchSalesRepId", l."ownerSalesRepId")
            WHERE l."firstTouchDueAt" >= :since AND l."firstTouchDueAt" < :until
            GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3
            """),
            {"since": since, "until": until},
        )
        return [SlaRow(*row) for row in rows]

    def any_due(self, session: Session, *, now: datetime) -> bool:
        """Whether any pending open lead is past its deadline or has been touched (the
        sensor's question: cheap on the partial index)."""
        return bool(
            session.execute(
                text(f"""
                SELECT EXISTS (
                    SELECT FROM leads AS l
                    WHERE {_PENDING.replace('"first', 'l."first')} AND l.status = 'open'
                      AND l."ownerHubspotOwnerId" IS NOT NULL
                      AND (l."firstTouchDueAt" <= :now OR {_FIRST_TOUCH} IS NOT NULL)
                )"""),
                {"now": now},
            ).scalar()
        )
