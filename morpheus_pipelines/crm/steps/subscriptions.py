"""Subscriptions (workspaces): every CRM row belongs to one (docs/ownership.md)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Subscription


def create_subscription(session: Session, name: str) -> uuid.UUID:
    """A new workspace named ``name``; its id is what ``MORPHEUS_SUBSCRIPTION_ID`` takes."""
    if not name.strip():
        raise ValueError("a subscription needs a non-empty name")
    subscription = Subscription(name=name.strip())
    session.add(subscription)
    session.flush()
    return subscription.id


def list_subscriptions(session: Session) -> list[tuple[uuid.UUID, str]]:
    statement = select(Subscription.id, Subscription.name).order_by(Subscription.createdAt)
    return [(row.id, row.name) for row in session.execute(statement)]


def subscription_exists(url: str, subscription_id: uuid.UUID) -> bool:
    from morpheus_pipelines.db.session import get_session

    with get_session(url) as session:
        return session.get(Subscription, subscription_id) is not None


class SubscriptionRefused(ValueError):
    """A subscription setting refused; ``option`` names the command-line option it came from."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def subscription_settings(session: Session, subscription_id: uuid.UUID) -> dict[str, Any] | None:
    """The subscription's id, name and settings, or None when it does not exist."""
    subscription = session.get(Subscription, subscription_id)
    if subscription is None:
        return None
    return {
        "id": subscription.id,
        "name": subscription.name,
        "hubspot_portal_id": subscription.hubspotPortalId,
    }


def set_hubspot_portal_id(session: Session, subscription_id: uuid.UUID, portal_id: int) -> None:
    """The HubSpot portal whose webhook deliveries belong to the subscription: a positive id
    no other subscription answers for (setting the same one again changes nothing)."""
    if portal_id <= 0:
        raise SubscriptionRefused("--hubspot-portal-id", "a HubSpot portal id is positive")
    subscription = session.get(Subscription, subscription_id, with_for_update=True)
    if subscription is None:
        raise SubscriptionRefused("SUBSCRIPTION", f"subscription {subscription_id} does not exist")
    holder = session.scalar(
        select(Subscription.id).where(
            Subscription.hubspotPortalId == portal_id, Subscription.id != subscription_id
        )
    )
    if holder is not None:
        raise SubscriptionRefused(
            "--hubspot-portal-id", f"portal {portal_id} belongs to subscription {holder}"
        )
    subscription.hubspotPortalId = portal_id
    session.flush()
