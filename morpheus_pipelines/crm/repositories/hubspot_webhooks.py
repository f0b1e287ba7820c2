"""Repository of the HubSpot webhook events and of the writes they make, and of what the deal
worker and the reconciliation read (docs/hubspot-webhooks.md).

The events table is the "applied once" guard: :meth:`record_new` inserts a delivery's events
``ON CONFLICT ("portalId", "eventId") DO NOTHING`` and returns only the ones inserted now, so
a delivery HubSpot sends again applies nothing a second time. The writes find their rows by
``contacts.hubspotContactId`` and ``leads.hubspotContactId`` within the portal's subscription.
Not among the 16 exports of ``morpheus_pipelines.crm.repositories``; import it from this
module. Nothing commits: the caller's one transaction does (the request's, or a worker's).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import exists, func, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session, aliased

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
from morpheus_pipelines.crm.rules.hubspot_deals import DEAL_EVENT_TYPE
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

    # -- the deal worker -----------------------------------------------------------------------

    def pending_deal_events(
        self, session: Session, subscription_id: uuid.UUID, *, after_id: int = 0, limit: int = 100
    ) -> list[HubSpotWebhookEvent]:
        """Up to ``limit`` pending deal events of the subscription after row ``after_id``, in
        the order they were stored."""
        return list(
            session.scalars(
                select(HubSpotWebhookEvent)
                .where(
                    HubSpotWebhookEvent.subscriptionId == subscription_id,
                    HubSpotWebhookEvent.status == WebhookEventStatus.PENDING,
                    HubSpotWebhookEvent.subscriptionType == DEAL_EVENT_TYPE,
                    HubSpotWebhookEvent.id > after_id,
                )
                .order_by(HubSpotWebhookEvent.id)
                .limit(limit)
            )
        )

    def lock_pending(self, session: Session, row_ids: Iterable[int]) -> set[int]:
        """Lock the rows still pending among ``row_ids`` until commit; the ids locked. A row
        another worker holds is skipped, a row settled since is not pending: neither is
        applied twice."""
        ids = sorted(set(row_ids))
        if not ids:
            return set()
        return set(
            session.scalars(
                select(HubSpotWebhookEvent.id)
                .where(
                    HubSpotWebhookEvent.id.in_(ids),
                    HubSpotWebhookEvent.status == WebhookEventStatus.PENDING,
                )
                .with_for_update(skip_locked=True)
            )
        )

    def superseded(self, session: Session, row_ids: Iterable[int]) -> set[int]:
        """The rows among ``row_ids`` for which a later event (``occurredAt``, then
        ``eventId``) of the same type, object and property was received, whatever its
        status."""
        ids = sorted(set(row_ids))
        if not ids:
            return set()
        event, later = HubSpotWebhookEvent, aliased(HubSpotWebhookEvent)
        return set(
            session.scalars(
                select(event.id).where(
                    event.id.in_(ids),
                    exists().where(
                        later.portalId == event.portalId,
                        later.objectId == event.objectId,
                        later.subscriptionType == event.subscriptionType,
                        later.propertyName == event.propertyName,
                        tuple_(later.occurredAt, later.eventId)
                        > tuple_(event.occurredAt, event.eventId),
                    ),
                )
            )
        )

    def settle(
        self,
        session: Session,
        row_id: int,
        status: str,
        outcome: str,
        *,
        applied_at: datetime | None,
    ) -> None:
        """A pending event's end: ``applied`` (at ``applied_at``) or ``ignored``, and why."""
        session.execute(
            update(HubSpotWebhookEvent)
            .where(HubSpotWebhookEvent.id == row_id)
            .values(status=status, outcome=outcome, appliedAt=applied_at)
        )

    def deal_event_backlog(
        self, session: Session, subscription_id: uuid.UUID | None
    ) -> tuple[int, datetime | None, int | None]:
        """``(how many, oldest receivedAt, newest row id)`` of the subscription's pending deal
        events (of every subscription's, for ``None``)."""
        statement = select(
            func.count(),
            func.min(HubSpotWebhookEvent.receivedAt),
            func.max(HubSpotWebhookEvent.id),
        ).where(
            HubSpotWebhookEvent.status == WebhookEventStatus.PENDING,
            HubSpotWebhookEvent.subscriptionType == DEAL_EVENT_TYPE,
        )
        if subscription_id is not None:
            statement = statement.where(HubSpotWebhookEvent.subscriptionId == subscription_id)
        count, oldest, newest = session.execute(statement).one()
        return count, oldest, newest

    def open_leads_of_contacts(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        hubspot_contact_ids: Iterable[str],
        *,
        created_by: datetime,
    ) -> list[uuid.UUID]:
        """The subscription's open leads linked to one of these HubSpot contacts and created
        at or before ``created_by``."""
        ids = sorted(set(hubspot_contact_ids))
        if not ids:
            return []
        return list(
            session.scalars(
                select(Lead.id)
                .where(
                    Lead.subscriptionId == subscription_id,
                    Lead.hubspotContactId.in_(ids),
                    Lead.status == LeadStatus.OPEN,
                    Lead.createdAt <= created_by,
                )
                .order_by(Lead.createdAt, Lead.id)
            )
        )

    # -- the reconciliation --------------------------------------------------------------------

    def portal_of(self, session: Session, subscription_id: uuid.UUID) -> int | None:
        """The HubSpot portal the subscription answers for, if one is set."""
        return session.scalar(
            select(Subscription.hubspotPortalId).where(Subscription.id == subscription_id)
        )

    def contact_mirror(
        self, session: Session, subscription_id: uuid.UUID, hubspot_contact_ids: Iterable[str]
    ) -> dict[str, list[tuple[str | None, str | None]]]:
        """For each of these HubSpot contacts that the subscription has a contact or a lead
        of: the ``(hubspotOwnerId, callAssignedTo)`` of each of its contacts (an empty list
        when only leads name it). Contacts we know nothing of are left out."""
        ids = sorted(set(hubspot_contact_ids))
        if not ids:
            return {}
        mirror: dict[str, list[tuple[str | None, str | None]]] = {}
        for hubspot_id, owner, call_assigned in session.execute(
            select(Contact.hubspotContactId, Contact.hubspotOwnerId, Contact.callAssignedTo)
            .where(Contact.subscriptionId == subscription_id, Contact.hubspotContactId.in_(ids))
            .order_by(Contact.id)
        ):
            mirror.setdefault(hubspot_id, []).append((owner, call_assigned))
        for hubspot_id in session.scalars(
            select(Lead.hubspotContactId)
            .where(Lead.subscriptionId == subscription_id, Lead.hubspotContactId.in_(ids))
            .distinct()
        ):
            mirror.setdefault(hubspot_id, [])
        return mirror

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
            select(
                Lead.id,
                Lead.status,
                Lead.ownerSalesRepId,
                Lead.ownerIsFallback,
                Lead.loadReleasedAt,
            )
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
        for _, status, former_rep, was_fallback, released_at in changed:
            if status != LeadStatus.OPEN or released_at is not None:
                continue  # a lead that no longer counts has no load to move
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
