"""``SalesRepRepository``: the reps of a subscription (docs/data-layer.md, "SalesRepRepository";
ownership rules in docs/ownership.md).

Two kinds of lookup exist on purpose:

* the ``get_active_*`` lookups and ``list_active_for_subscription`` answer "may this rep be
  given new work?" — a deactivated rep must drop out at once, so their leads become
  reassignable and round-robin skips them;
* ``get_by_hubspot_owner_id`` answers "who is this?" for an inbound record (a call or an
  engagement already owned by someone). It carries no ``isActive`` predicate because the rep
  may have left since, and dropping the row would lose history.
"""

from __future__ import annotations

import uuid

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from morpheus_pipelines.crm.models import SalesRep
from morpheus_pipelines.platform.store.base import BaseRepository


def _present(column: InstrumentedAttribute[str | None]) -> ColumnElement[bool]:
    """A CRM id counts only when it is set and non-empty: an empty string mirrored from a
    provider is not an owner anyone can be assigned to."""
    return column.is_not(None) & (column != "")


class SalesRepRepository(BaseRepository[SalesRep]):
    model_class = SalesRep

    def get_active_by_email(
        self, session: Session, email: str, subscription_id: uuid.UUID
    ) -> SalesRep | None:
        """The active rep of the subscription with exactly this email (``(subscriptionId,
        email)`` is unique, so at most one row matches); ``None`` when the rep is absent or
        deactivated."""
        statement = select(SalesRep).where(
            SalesRep.subscriptionId == subscription_id,
            SalesRep.email == email,
            SalesRep.isActive.is_(True),
        )
        return session.scalars(statement).one_or_none()

    def get_active_by_hubspot_owner_id(
        self, session: Session, hubspot_owner_id: str, subscription_id: uuid.UUID
    ) -> SalesRep | None:
        """The active rep holding this HubSpot owner id — the reassignment test's question
        ("is the current owner a real, active rep?"), so it must be ``None`` for a deactivated
        rep. Lowest id first should two rows share an owner id (nothing in the schema forbids
        it), so the answer is stable."""
        statement = (
            select(SalesRep)
            .where(
                SalesRep.subscriptionId == subscription_id,
                SalesRep.hubspotOwnerId == hubspot_owner_id,
                SalesRep.isActive.is_(True),
            )
            .order_by(SalesRep.id)
            .limit(1)
        )
        return session.scalars(statement).first()

    def get_by_hubspot_owner_id(
        self, session: Session, hubspot_owner_id: str, subscription_id: uuid.UUID
    ) -> SalesRep | None:
        """The rep holding this HubSpot owner id, active or not.

        Deliberately without an ``isActive`` filter: it resolves the rep of an inbound call or
        engagement that was owned by someone who may since have been deactivated, and losing
        that link would lose history. Use ``get_active_by_hubspot_owner_id`` to assign new
        work. When several rows share the owner id an active one is preferred, then the
        lowest id.
        """
        statement = (
            select(SalesRep)
            .where(
                SalesRep.subscriptionId == subscription_id,
                SalesRep.hubspotOwnerId == hubspot_owner_id,
            )
            .order_by(SalesRep.isActive.desc(), SalesRep.id)
            .limit(1)
        )
        return session.scalars(statement).first()

    def list_active_for_subscription(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        *,
        require_hubspot: bool = True,
        require_nooks: bool = False,
    ) -> list[SalesRep]:
        """Active reps of the subscription, ordered ``id ASC``.

        The ordering is load-bearing: the round-robin cursor is an index into this list, so it
        must be the same list in the same order on every call (a new rep gets a higher id and
        joins at the end). ``require_hubspot`` keeps only reps with a HubSpot owner id (the
        point of assignment is to set one); ``require_nooks`` also requires a Nooks user id,
        for Nooks sequence enrolment.
        """
        statement = select(SalesRep).where(
            SalesRep.subscriptionId == subscription_id, SalesRep.isActive.is_(True)
        )
        if require_hubspot:
            statement = statement.where(_present(SalesRep.hubspotOwnerId))
        if require_nooks:
            statement = statement.where(_present(SalesRep.nooksUserId))
        return list(session.scalars(statement.order_by(SalesRep.id)))

    def list_for_subscription(self, session: Session, subscription_id: uuid.UUID) -> list[SalesRep]:
        """Every rep of the subscription, active or not, by id (``morpheus rep list``)."""
        statement = (
            select(SalesRep).where(SalesRep.subscriptionId == subscription_id).order_by(SalesRep.id)
        )
        return list(session.scalars(statement))
