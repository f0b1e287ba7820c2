"""The HubSpot webhook events received (docs/hubspot-webhooks.md): one row per event, kept.

The "applied once" guard lives here: ``(portalId, eventId)`` is UNIQUE, so an event HubSpot
delivers again (it retries, and its deliveries overlap) is inserted ``ON CONFLICT DO NOTHING``
and only a newly inserted event is applied.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.crm.rules.hubspot_webhooks import WebhookEventStatus
from morpheus_pipelines.crm.rules.lead_status import sql_values
from morpheus_pipelines.platform.store.model_base import Base


class HubSpotWebhookEvent(Base):
    __tablename__ = "hubspot_webhook_events"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("subscriptions.id"), nullable=False, index=True
    )
    portalId: Mapped[int] = mapped_column(BigInteger, nullable=False)
    eventId: Mapped[int] = mapped_column(BigInteger, nullable=False)
    subscriptionType: Mapped[str] = mapped_column(Text, nullable=False)
    objectId: Mapped[int] = mapped_column(BigInteger, nullable=False)
    propertyName: Mapped[str | None] = mapped_column(Text)
    propertyValue: Mapped[str | None] = mapped_column(Text)
    occurredAt: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    # The event as HubSpot sent it: what a later worker (or a person) reads.
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False)
    status: Mapped[str] = mapped_column(Text, nullable=False)  # a WebhookEventStatus
    receivedAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    appliedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # What applying it did, or why it was ignored, when the deal worker settled it.
    outcome: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        UniqueConstraint("portalId", "eventId"),
        # The latest change of one property of one object (the out-of-order check).
        Index(None, "portalId", "objectId"),
        # What the deal worker and its sensor look for.
        Index(
            "ix_hubspot_webhook_events_pending",
            "subscriptionId",
            "id",
            postgresql_where=text("status = 'pending'"),
        ),
        CheckConstraint(f"status IN ({sql_values(WebhookEventStatus)})", name="known_status"),
    )
