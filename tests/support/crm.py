"""Helpers of the CRM data-layer tests."""

from __future__ import annotations

import uuid

from morpheus_pipelines.crm.models import Subscription
from morpheus_pipelines.db.session import get_session


def new_subscription(database_url: str, name: str = "Acme") -> uuid.UUID:
    """A committed subscription (every CRM row belongs to one); returns its id."""
    with get_session(database_url) as session:
        subscription = Subscription(name=name)
        session.add(subscription)
        session.flush()
        return subscription.id
