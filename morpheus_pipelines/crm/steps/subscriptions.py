"""Subscriptions (workspaces): every CRM row belongs to one (docs/ownership.md)."""

from __future__ import annotations

import uuid

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
