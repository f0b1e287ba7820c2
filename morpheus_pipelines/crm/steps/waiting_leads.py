"""Give waiting leads an owner once someone is assignable (docs/leads.md, "Who owns a
lead"): the same ladder as intake, oldest lead first, each new owner queued for HubSpot as
the contact's owner in the transaction that records it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select

from morpheus_pipelines.crm.models import Lead, SalesRep
from morpheus_pipelines.crm.reports.waiting_leads import waiting_note
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.crm.repositories.routing_directory import (
    ASSIGNABLE,
    RoutingDirectoryRepository,
)
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, lead_owner_intent
from morpheus_pipelines.crm.rules.lead_status import LeadStatus, OwnerState
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.report_notes import OperationsNote

BATCH = 500

_leads = LeadRepository()
_routing = RoutingDirectoryRepository()


@dataclass(frozen=True)
class WaitingLeads:
    """A subscription's open leads without an owner, and whether anyone could take them."""

    waiting: int
    oldest_created_at: datetime | None
    assignable_rep_ids: tuple[int, ...]

    @property
    def anyone_assignable(self) -> bool:
        return bool(self.assignable_rep_ids)


@dataclass(frozen=True)
class OwnersGiven:
    """What one run did: leads given a pool member, a fallback rep, and still waiting."""

    assigned: int
    fallback: int
    still_waiting: int


def waiting_leads(session_factory: SessionFactory, subscription_id: uuid.UUID) -> WaitingLeads:
    """How many of the subscription's open leads wait for an owner, and since when."""
    with session_factory() as session:
        waiting, oldest = session.execute(
            select(func.count(), func.min(Lead.createdAt)).where(
                Lead.subscriptionId == subscription_id,
                Lead.status == LeadStatus.OPEN,
                Lead.ownerHubspotOwnerId.is_(None),
            )
        ).one()
        assignable = session.scalars(
            select(SalesRep.id)
            .where(SalesRep.subscriptionId == subscription_id, *ASSIGNABLE)
            .order_by(SalesRep.id)
        )
        return WaitingLeads(waiting, oldest, tuple(assignable))


def give_waiting_leads_owners(
    session_factory: SessionFactory, subscription_id: uuid.UUID, *, batch: int = BATCH
) -> OwnersGiven:
    """Each waiting lead, oldest first, gets the ladder's owner (a pool member charged like
    at intake, else a fallback rep); a batch commits together with its ``CONTACT_OWNER``
    outbox rows. Leads another run holds are skipped; a lead nobody can take stays waiting
    (and ends the run: the next ones would find nobody either)."""
    assigned = fallback = 0
    while True:
        with session_factory() as session:
            store = CrmStore(session)
            leads = _leads.waiting(session, subscription_id, batch)
            stuck = False
            for lead in leads:
                candidates = _routing.live_candidates(session, subscription_id, lead.poolId)
                owner, state = _leads.ladder_owner(
                    session, subscription_id, candidates, lead.poolId
                )
                if owner is None:
                    stuck = True
                    break
                _leads.give_owner(
                    session, lead, owner, charged=state is OwnerState.ASSIGNED, state=state
                )
                store.outbox.enqueue(
                    session,
                    subscription_id,
                    OutboxKind.CONTACT_OWNER,
                    lead_owner_intent(lead.id, owner.hubspot_owner_id),
                    {"hubspot_owner_id": owner.hubspot_owner_id},
                    lead_id=lead.id,
                )
                if state is OwnerState.ASSIGNED:
                    assigned += 1
                else:
                    fallback += 1
            session.commit()
        if stuck or len(leads) < batch:
            break
    left = waiting_leads(session_factory, subscription_id)
    return OwnersGiven(assigned, fallback, left.waiting)


def waiting_operations_note(
    session_factory: SessionFactory, subscription_id: uuid.UUID, now: datetime
) -> OperationsNote:
    """The Daily Summary's note on leads waiting for an owner."""
    left = waiting_leads(session_factory, subscription_id)
    return waiting_note(left.waiting, left.oldest_created_at, left.anyone_assignable, now)
