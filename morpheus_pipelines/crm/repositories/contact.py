"""Repository of contacts: the people behind sellers, and the identity resolution that keeps
one row per person (docs/data-layer.md, "The CRM tables").

``email`` and ``phone`` are unique across all contacts when present, and enrichment re-scrapes
the same people over and over. ``upsert_for_seller`` is therefore a merge rather than an
``ON CONFLICT``: a naive upsert would either raise on a collision with another contact or
blank out a verified phone number with an empty scrape result. The merge is what lets
enrichment run repeatedly against a contact without degrading it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Select, or_, select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Contact
from morpheus_pipelines.platform.store.base import BaseRepository

# Never rewritten by a merge: the surrogate key, the first-seen time, and the tenant that
# created the row. ``email`` and ``phone`` are globally unique, so a second tenant's scrape can
# resolve to a contact another tenant owns; moving the row would take it from that tenant.
_NOT_MERGED = frozenset({"id", "createdAt", "subscriptionId"})

# The globally unique columns: an incoming value another contact already holds is dropped.
_UNIQUE_IDENTIFIERS = ("email", "phone")


def _blank(value: Any) -> bool:
    """``None`` or an empty/whitespace-only string: what a scrape returns when it found
    nothing, never a reason to overwrite what is stored."""
    return value is None or (isinstance(value, str) and not value.strip())


def _present(value: str | None) -> str | None:
    return None if _blank(value) else value


class ContactRepository(BaseRepository[Contact]):
    model_class = Contact

    def get_by_email(self, session: Session, email: str) -> Contact | None:
        """Exact match on the nullable-unique ``email`` (case and whitespace included, as the
        constraint compares them)."""
        return session.scalars(select(Contact).where(Contact.email == email)).first()

    def get_by_phone(self, session: Session, phone: str) -> Contact | None:
        """Exact match on the nullable-unique ``phone``."""
        return session.scalars(select(Contact).where(Contact.phone == phone)).first()

    def get_by_hubspot_contact_id(self, session: Session, hubspot_id: str) -> Contact | None:
        """Match on the CRM identifier. It is indexed but not unique, so when two rows carry
        it the oldest (lowest ``id``) answers, the same row every time."""
        statement = (
            select(Contact)
            .where(Contact.hubspotContactId == hubspot_id)
            .order_by(Contact.id.asc())
            .limit(1)
        )
        return session.scalars(statement).first()

    def get_by_seller(
        self, session: Session, seller_id: int, *, limit: int = 100, offset: int = 0
    ) -> list[Contact]:
        """All contacts of one seller (``sellers.id``), newest first; ``id`` breaks ties."""
        statement = (
            select(Contact)
            .where(Contact.sellerId == seller_id)
            .order_by(Contact.createdAt.desc(), Contact.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return list(session.scalars(statement))

    @staticmethod
    def _missing_hubspot_id(subscription_id: uuid.UUID) -> Select[tuple[Contact]]:
        """Contacts of the tenant that have no CRM id yet but something to resolve it with."""
        return select(Contact).where(
            Contact.subscriptionId == subscription_id,
            Contact.hubspotContactId.is_(None),
            or_(
                Contact.email.is_not(None),
                Contact.phone.is_not(None),
                Contact.mobilePhone.is_not(None),
            ),
        )

    def list_missing_hubspot_contact_id(
        self, session: Session, *, subscription_id: uuid.UUID, limit: int
    ) -> list[Contact]:
        """Contacts still without a ``hubspotContactId`` that carry an email, phone or mobile
        phone, oldest first. The age ordering guarantees nothing is stranded forever, which
        the priority-ordered twin below cannot promise."""
        statement = (
            self._missing_hubspot_id(subscription_id)
            .order_by(Contact.createdAt.asc(), Contact.id.asc())
            .limit(limit)
        )
        return list(session.scalars(statement))

    def list_missing_hubspot_id_by_last_sync(
        self, session: Session, *, subscription_id: uuid.UUID, limit: int = 25
    ) -> list[Contact]:
        """The same population, highest ``hubspotSyncPriority`` first and then the contacts
        tried longest ago (never-tried ones first), so high-value contacts reach the CRM first
        and a failed attempt goes to the back of its priority band. ``id`` makes the order
        total."""
        statement = (
            self._missing_hubspot_id(subscription_id)
            .order_by(
                Contact.hubspotSyncPriority.desc(),
                Contact.hubspotLastSyncedAt.asc().nulls_first(),
                Contact.id.asc(),
            )
            .limit(limit)
        )
        return list(session.scalars(statement))

    def find_existing(
        self,
        session: Session,
        *,
        email: str | None,
        phone: str | None,
        hubspot_contact_id: str | None,
    ) -> Contact | None:
        """Identity resolution: the CRM id first (the strongest claim), then email, then
        phone. Missing or blank identifiers are skipped; ``None`` when nothing matches."""
        hubspot_contact_id = _present(hubspot_contact_id)
        if hubspot_contact_id is not None:
            found = self.get_by_hubspot_contact_id(session, hubspot_contact_id)
            if found is not None:
                return found
        email = _present(email)
        if email is not None:
            found = self.get_by_email(session, email)
            if found is not None:
                return found
        phone = _present(phone)
        if phone is not None:
            return self.get_by_phone(session, phone)
        return None

    def upsert_for_seller(self, session: Session, data: Mapping[str, Any]) -> Contact:
        """Find-or-create with merge semantics; returns the created or merged contact.

        * The contact is resolved with :meth:`find_existing` (CRM id, then email, then phone).
        * ``None`` and empty or blank strings in ``data`` are ignored: a stored value is never
          overwritten with nothing, and a new contact gets the column default instead.
        * An incoming ``email`` or ``phone`` that another contact already holds is dropped
          from this write, instead of raising on the unique constraint; the rest of the
          payload still lands.
        * ``id``, ``createdAt`` and ``subscriptionId`` of an existing contact are kept.
        * With no match the contact is created, so ``data`` must then carry
          ``subscriptionId``.

        Two transactions creating the same new contact at once can still meet on the unique
        constraint; that ``IntegrityError`` propagates (the caller's transaction rolls back
        and the message is redelivered, when the merge finds the winner's row).
        """
        self._check_columns(data, "upsert_for_seller")
        incoming = {key: value for key, value in data.items() if not _blank(value)}
        existing = self.find_existing(
            session,
            email=incoming.get("email"),
            phone=incoming.get("phone"),
            hubspot_contact_id=incoming.get("hubspotContactId"),
        )
        return self._merge(session, existing, incoming)[0]

    def upsert_from_hubspot(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        hubspot_contact_id: str,
        data: Mapping[str, Any],
    ) -> tuple[Contact, bool]:
        """The subscription's contact with this HubSpot id, created or merged with ``data``;
        returns it and whether anything was written. Scoped to the subscription: another
        portal's contact 101 is another person. The merge is :meth:`upsert_for_seller`'s:
        blank values never overwrite, and an ``email`` or ``phone`` another contact holds is
        dropped from the write."""
        self._check_columns(data, "upsert_from_hubspot")
        incoming = {key: value for key, value in data.items() if not _blank(value)}
        existing = session.scalars(
            select(Contact)
            .where(
                Contact.subscriptionId == subscription_id,
                Contact.hubspotContactId == hubspot_contact_id,
            )
            .order_by(Contact.id.asc())
            .limit(1)
        ).first()
        if existing is None:
            incoming |= {"subscriptionId": subscription_id, "hubspotContactId": hubspot_contact_id}
        return self._merge(session, existing, incoming)

    def _merge(
        self, session: Session, existing: Contact | None, incoming: dict[str, Any]
    ) -> tuple[Contact, bool]:
        """Create the contact from ``incoming`` (blank values already left out), or write into
        ``existing`` what differs; an ``email`` or ``phone`` another contact holds is dropped
        from the write. Returns the contact and whether anything was written."""
        lookups = {"email": self.get_by_email, "phone": self.get_by_phone}
        for column in _UNIQUE_IDENTIFIERS:
            if column not in incoming:
                continue
            holder = lookups[column](session, incoming[column])
            if holder is not None and (existing is None or holder.id != existing.id):
                del incoming[column]
        if existing is None:
            return self.insert(session, incoming), True
        changes = {
            key: value
            for key, value in incoming.items()
            if key not in _NOT_MERGED and getattr(existing, key) != value
        }
        if not changes:
            return existing, False
        return self.update(session, existing, changes), True
