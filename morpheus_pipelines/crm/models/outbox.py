"""The HubSpot outbox (docs/hubspot-outbox.md): what Morpheus decided and HubSpot must see.

A row is written in the same transaction as the decision it carries (a lead and its owner,
a follow-up task, an escalation, an AI call, a rep's call list), so a decision is never taken
without its write to HubSpot queued, nor queued for a decision that was rolled back. The
drain reads ``pending`` rows whose ``nextAttemptAt`` has come, in batches, and settles each.
``(subscriptionId, intentKey)`` is UNIQUE: an intent is queued once however often it is
decided again.
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
    Integer,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, OutboxStatus
from morpheus_pipelines.crm.rules.lead_status import sql_values
from morpheus_pipelines.platform.store.model_base import Base


class HubSpotOutboxRow(Base):
    __tablename__ = "hubspot_outbox"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("subscriptions.id"), nullable=False
    )
    kind: Mapped[str] = mapped_column(Text, nullable=False)  # an OutboxKind
    intentKey: Mapped[str] = mapped_column(Text, nullable=False)
    # What to write: HubSpot property names and values, plus the ids the write needs.
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False)
    # The local row the answer belongs to (at most one is set).
    leadId: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), ForeignKey("leads.id"))
    followUpTaskId: Mapped[int | None] = mapped_column(ForeignKey("follow_up_tasks.id"))
    activityId: Mapped[int | None] = mapped_column(ForeignKey("activities.id"))
    salesRepId: Mapped[int | None] = mapped_column(ForeignKey("sales_reps.id"))
    status: Mapped[str] = mapped_column(  # an OutboxStatus
        Text, nullable=False, server_default=OutboxStatus.PENDING.value
    )
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    nextAttemptAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    lastError: Mapped[str | None] = mapped_column(Text)
    hubspotObjectId: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    doneAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        UniqueConstraint("subscriptionId", "intentKey"),
        CheckConstraint(f"status IN ({sql_values(OutboxStatus)})", name="known_status"),
        CheckConstraint(f"kind IN ({sql_values(OutboxKind)})", name="known_kind"),
        CheckConstraint("attempts >= 0", name="attempts_not_negative"),
        # The drain's read: due pending rows, oldest first.
        Index(
            "ix_hubspot_outbox_due",
            "nextAttemptAt",
            "id",
            postgresql_where=text("status = 'pending'"),
        ),
        Index(None, "status", "subscriptionId"),
    )
