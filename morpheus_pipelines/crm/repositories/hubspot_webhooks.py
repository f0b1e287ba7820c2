"""Repository of the HubSpot webhook events and of the writes they make (docs/hubspot-webhooks.md).

The events table is the "applied once" guard: :meth:`record_new` inserts a delivery's events
``ON CONFLICT ("portalId", "eventId") DO NOTHING`` and returns only the ones inserted now, so
a delivery HubSpot sends again applies nothing a second time. The writes find their rows by
``contacts.hubspotContactId`` and ``leads.hubspotContactId`` within the portal's subscription.
Not among the 16 exports of ``morpheus_pipelines.crm.repositories``; import it from this
module. Nothing commits: the request's one transaction does.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import exists, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import (
    Activity,
    Contact,
    HubSpotWebhookEvent,
    Lead,
    LifeCycleStage,
    SalesRep,
    Subscription,
    TargetEmails,
    TargetPhoneNumber,
)
from morpheus_pipelines.crm.rules.hubspot_webhooks import WebhookEventStatus
from morpheus_pipelines.crm.rules.lead_status import LeadStatus
from morpheus_pipelines.platform.store.base import BaseRepository


class HubSpotWebhookRepository(BaseRepository[HubSpotWebhookEvent]):
    model_class = HubSpotWebhookEvent

    # -- the events ----------------------------------------------------------------------------

    def subscriptions_of_portals(
        self, session: Session, portal_ids: Iterable[int]
    ) -> dict[int, uuid.UUID]:
        """``{portal id: subscription id}`` of the portals some subscription answers for."""
        wanted = sorted(set(portal_ids))
        if not wanted:
            return {}
        rows = session.execute(
            select(Subscription.hubspotPortalId, Subscription.id).where(
                Subscription.hubspotPortalId.in_(wanted)
            )
        )
        return {portal: subscription for portal, subscription in rows}

    def record_new(self, session: Session, rows: Sequence[Mapping[str, Any]]) -> set[int]:
        """Insert the events not stored yet; the ``eventId``s inserted now (the others were
        delivered before, or twice in this delivery). Each row needs ``portalId`` and
        ``eventId``; rows of one portal only."""
        if not rows:
            return set()
        inserted = session.execute(
            pg_insert(HubSpotWebhookEvent)
            .values([dict(row) for row in rows])
            .on_conflict_do_nothing(index_elements=["portalId", "eventId"])
            .returning(HubSpotWebhookEvent.eventId)
        )
        return set(inserted.scalars())

    def set_status(
        self,
        session: Session,
        portal_id: int,
        event_ids: Iterable[int],
        status: str,
        *,
        applied_at: datetime | None = None,
    ) -> None:
        ids = sorted(set(event_ids))
        if ids:
            session.execute(
                update(HubSpotWebhookEvent)
                .where(
                    HubSpotWebhookEvent.portalId == portal_id,
                    HubSpotWebhookEvent.eventId.in_(ids),
                )
                .values(status=status, appliedAt=applied_at)
            )

    def newer_change_applied(
        self,
        session: Session,
        portal_id: int,
        *,
        object_id: int,
        property_name: str,
        occurred_at: datetime,
        event_id: int,
    ) -> bool:
        """Whether a later change of the same property of the same object was already applied
        (deliveries arrive out of order: an older value must not overwrite a newer one)."""
        return bool(
            session.scalar(
                select(
                    exists().where(
                        HubSpotWebhookEvent.portalId == portal_id,
                        HubSpotWebhookEvent.objectId == object_id,
                        HubSpotWebhookEvent.propertyName == property_name,
                        HubSpotWebhookEvent.status == WebhookEventStatus.APPLIED,
                        HubSpotWebhookEvent.eventId != event_id,
                        HubSpotWebhookEvent.occurredAt > occurred_at,
                    )
                )
            )
        )

    # -- contacts ------------------------------------------------------------------------------

    def set_contact_properties(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        hubspot_contact_id: str,
        values: Mapping[str, Any],
    ) -> int:
        """``values`` on every contact of the subscription with this HubSpot id; how many."""
        result = session.execute(
            update(Contact)
            .where(
                Contact.subscriptionId == subscription_id,
                Contact.hubspotContactId == hubspot_contact_id,
            )
            .values(**values, updatedAt=func.now())
            .execution_options(synchronize_session=False)
        )
        return result.rowcount

    def contact_emails(
        self, session: Session, subscription_id: uuid.UUID, hubspot_contact_id: str
    ) -> list[str]:
        """The email addresses of the subscription's contacts with this HubSpot id (and of
        the leads linked to it)."""
        contacts = select(Contact.email).where(
            Contact.subscriptionId == subscription_id,
            Contact.hubspotContactId == hubspot_contact_id,
            Contact.email.is_not(None),
        )
        leads = select(Lead.email).where(
            Lead.subscriptionId == subscription_id,
            Lead.hubspotContactId == hubspot_contact_id,
            Lead.email.is_not(None),
        )
        found = session.scalars(contacts.union(leads))
        return sorted({email.lower() for email in found if email.strip()})

    def mark_contact_deleted(
        self, session: Session, subscription_id: uuid.UUID, hubspot_contact_id: str
    ) -> int:
        """A contact deleted in HubSpot, through the status columns (nothing is deleted here:
        its activities, leads and history stay): the contact is ``DISQUALIFIED``, its phone
        numbers inactive and deleted (the dialer skips them), its address deleted from the
        campaign addresses. How many contacts."""
        contact_ids = list(
            session.scalars(
                update(Contact)
                .where(
                    Contact.subscriptionId == subscription_id,
                    Contact.hubspotContactId == hubspot_contact_id,
                )
                .values(lifeCycleStage=LifeCycleStage.DISQUALIFIED, updatedAt=func.now())
                .returning(Contact.id)
                .execution_options(synchronize_session=False)
            )
        )
        if not contact_ids:
            return 0
        session.execute(
            update(TargetPhoneNumber)
            .where(TargetPhoneNumber.contactId.in_(contact_ids))
            .values(isActive=False, isDeleted=True, updatedAt=func.now())
            .execution_options(synchronize_session=False)
        )
        emails = select(func.lower(Contact.email)).where(
            Contact.id.in_(contact_ids), Contact.email.is_not(None)
        )
        session.execute(
            update(TargetEmails)
            .where(
                TargetEmails.subscriptionId == subscription_id,
                func.lower(TargetEmails.email).in_(emails),
            )
            .values(isDeleted=True, updatedAt=func.now())
            .execution_options(synchronize_session=False)
        )
        return len(contact_ids)

    def repoint_merged(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        merged_ids: Sequence[str],
        surviving_id: str,
    ) -> dict[str, int]:
        """A merge in HubSpot: every row of ours that named a merged contact names the
        surviving one. Contacts, leads and the activities' copy of the id are re-pointed;
        no row is moved, joined or deleted, so each keeps its activities and history (two
        local contacts may then share the surviving id, and later events apply to both).
        How many rows of each."""
        merged = sorted(set(merged_ids) - {surviving_id})
        if not merged:
            return {"contacts": 0, "leads": 0, "activities": 0}
        counts = {}
        for name, model in (("contacts", Contact), ("leads", Lead), ("activities", Activity)):
            result = session.execute(
                update(model)
                .where(
                    model.subscriptionId == subscription_id,
                    model.hubspotContactId.in_(merged),
                )
                .values(hubspotContactId=surviving_id)
                .execution_options(synchronize_session=False)
            )
            counts[name] = result.rowcount
        return counts

    # -- leads ---------------------------------------------------------------------------------

    def set_lead_owner(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        hubspot_contact_id: str,
        hubspot_owner_id: str,
    ) -> int:
        """The owner a person gave the contact in HubSpot, on every lead linked to it: the
        rep holding that owner id (active or not: HubSpot says who owns it), and each open
        lead's load moved from its former rep to the new one (a fallback lead was never
        charged, so it gives none back). How many leads changed."""
        rep = session.execute(
            select(SalesRep.id)
            .where(
                SalesRep.subscriptionId == subscription_id,
                SalesRep.hubspotOwnerId == hubspot_owner_id,
            )
            .order_by(SalesRep.isActive.desc(), SalesRep.id)
            .limit(1)
        ).scalar()
        # Locked first, so the load moved is the one of the owner each lead had.
        changed = session.execute(
            select(Lead.id, Lead.status, Lead.ownerSalesRepId, Lead.ownerIsFallback)
            .where(
                Lead.subscriptionId == subscription_id,
                Lead.hubspotContactId == hubspot_contact_id,
                Lead.ownerHubspotOwnerId != hubspot_owner_id,
            )
            .with_for_update()
        ).all()
        if changed:
            session.execute(
                update(Lead)
                .where(Lead.id.in_([row.id for row in changed]))
                .values(
                    ownerHubspotOwnerId=hubspot_owner_id,
                    ownerSalesRepId=rep,
                    ownerIsFallback=False,
                    updatedAt=func.now(),
                )
                .execution_options(synchronize_session=False)
            )
        for _, status, former_rep, was_fallback in changed:
            if status != LeadStatus.OPEN:
                continue
            if former_rep is not None and not was_fallback:
                session.execute(
                    update(SalesRep)
                    .where(SalesRep.id == former_rep, SalesRep.openLeads > 0)
                    .values(openLeads=SalesRep.openLeads - 1)
                )
            if rep is not None:
                session.execute(
                    update(SalesRep)
                    .where(SalesRep.id == rep)
                    .values(openLeads=SalesRep.openLeads + 1)
                )
        return len(changed)
