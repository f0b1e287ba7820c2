"""The tables of the timeline's consumers (docs/leads.md, "The timeline"): outbound messages,
automation rules and their firings, and the indexes on ``activities`` that the WhatsApp window
and the automations read.

Two guarantees live here: a nudge fires at most once per lead, rule and quiet period
(``(ruleId, leadId, quietSince)`` is UNIQUE), and a WhatsApp rule cannot be written so that it
would fire outside the 24-hour window (a CHECK, not a convention).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
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
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.crm.models.core import Activity, ActivityType, _enum
from morpheus_pipelines.crm.models.leads import _now, _subscription
from morpheus_pipelines.crm.rules.lead_status import MessageStatus, sql_values
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.platform.store.model_base import Base

WHATSAPP_WINDOW_SECONDS = 24 * 3600

# What counts as the lead engaging (docs/leads.md, "Automations on evidence"): anything they
# sent us, on any channel, and a call a human rep made. The AI dialer calling does not count:
# it is the automation itself. Queries repeat this text verbatim so the planner can use the
# partial index below.
ENGAGEMENT_PREDICATE = (
    "direction = 'inbound' OR (type = 'CALL' AND direction = 'outbound' AND "
    f"(metadata ->> 'hubspot_owner_id') IS DISTINCT FROM '{DIALER_FALLBACK_HUBSPOT_OWNER_ID}')"
)
INBOUND_WHATSAPP_PREDICATE = "type = 'WHATSAPP' AND direction = 'inbound'"

Index(
    "ix_activities_lead_engagement",
    Activity.leadId,
    Activity.occurredAt,
    postgresql_where=text(ENGAGEMENT_PREDICATE),
)
Index(
    "ix_activities_lead_inbound_whatsapp",
    Activity.leadId,
    Activity.occurredAt,
    postgresql_where=text(INBOUND_WHATSAPP_PREDICATE),
)

MESSAGE_CHANNELS = (ActivityType.WHATSAPP, ActivityType.EMAIL)
_MESSAGE_CHANNEL_CHECK = "channel IN ('WHATSAPP', 'EMAIL')"


class OutboundMessage(Base):
    """A message queued for a lead. A WhatsApp free-form message exists here only if the
    window was open when it was queued: the check is part of the insert statement."""

    __tablename__ = "outbound_messages"

    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")
    )
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    leadId: Mapped[uuid.UUID] = mapped_column(ForeignKey("leads.id"), nullable=False, index=True)
    channel: Mapped[ActivityType] = mapped_column(
        _enum(ActivityType, "activity_type"), nullable=False
    )
    kind: Mapped[str] = mapped_column(Text, nullable=False)
    templateName: Mapped[str | None] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(  # a MessageStatus
        Text, nullable=False, server_default=MessageStatus.QUEUED.value
    )
    # A caller's ``Idempotency-Key``: a retried request queues nothing new.
    idempotencyKey: Mapped[str | None] = mapped_column(Text)
    requestFingerprint: Mapped[str | None] = mapped_column(Text)
    automationFiringId: Mapped[int | None] = mapped_column(ForeignKey("automation_firings.id"))
    createdAt: Mapped[datetime] = _now()
    # Sending (docs/messages.md): attempts so far and when the next may start; the provider's
    # id once it accepted the message (a WhatsApp ``wamid``, an email's Message-ID), which its
    # status webhooks name; when each status arrived; why it failed.
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    nextAttemptAt: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )
    providerMessageId: Mapped[str | None] = mapped_column(Text, unique=True)
    sendingAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    sentAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    deliveredAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    readAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    failedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    failureReason: Mapped[str | None] = mapped_column(Text)
    failureCode: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        UniqueConstraint("subscriptionId", "idempotencyKey"),
        # The sender's question: which queued messages are due?
        Index(
            "ix_outbound_messages_due",
            "nextAttemptAt",
            postgresql_where=text("status = 'queued'"),
        ),
        CheckConstraint(_MESSAGE_CHANNEL_CHECK, name="message_channel"),
        CheckConstraint("kind IN ('free_form', 'template')", name="known_kind"),
        CheckConstraint(
            "(kind = 'template' AND \"templateName\" IS NOT NULL) OR "
            "(kind = 'free_form' AND body IS NOT NULL)",
            name="says_something",
        ),
        CheckConstraint(f"status IN ({sql_values(MessageStatus)})", name="known_status"),
    )


# Only WhatsApp rules name a window lead, and a free-form WhatsApp rule must (the window binds
# it); a WhatsApp template may go at any time, with or without one.
WINDOW_LEAD_CHECK = (
    "(channel = 'WHATSAPP' OR \"windowLeadSeconds\" IS NULL) AND "
    "(channel <> 'WHATSAPP' OR kind <> 'free_form' OR \"windowLeadSeconds\" IS NOT NULL)"
)


class AutomationRule(Base):
    """ "No inbound activity of any kind for ``quietSeconds`` → nudge on ``channel``".

    A WhatsApp rule also names ``windowLeadSeconds``: the nudge goes that long before the
    window closes, never after; so ``quietSeconds + windowLeadSeconds`` must fit in the 24-hour
    window, or the rule could never fire inside it.
    """

    __tablename__ = "automation_rules"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    name: Mapped[str] = mapped_column(Text, nullable=False)
    channel: Mapped[ActivityType] = mapped_column(
        _enum(ActivityType, "activity_type"), nullable=False
    )
    quietSeconds: Mapped[int] = mapped_column(Integer, nullable=False)
    windowLeadSeconds: Mapped[int | None] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(Text, nullable=False, server_default="template")
    templateName: Mapped[str | None] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    isActive: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="true")
    createdAt: Mapped[datetime] = _now()

    __table_args__ = (
        UniqueConstraint("subscriptionId", "name"),
        CheckConstraint(_MESSAGE_CHANNEL_CHECK, name="rule_channel"),
        CheckConstraint('"quietSeconds" > 0', name="quiet_positive"),
        CheckConstraint("kind IN ('free_form', 'template')", name="known_kind"),
        CheckConstraint(
            "(kind = 'template' AND \"templateName\" IS NOT NULL) OR "
            "(kind = 'free_form' AND body IS NOT NULL)",
            name="says_something",
        ),
        CheckConstraint(WINDOW_LEAD_CHECK, name="window_lead_for_whatsapp_only"),
        CheckConstraint(
            '"windowLeadSeconds" IS NULL OR ("windowLeadSeconds" > 0 AND '
            f'"quietSeconds" + "windowLeadSeconds" <= {WHATSAPP_WINDOW_SECONDS})',
            name="fits_the_window",
        ),
    )


class AutomationFiring(Base):
    """One nudge of one rule to one lead, for the quiet period that began at ``quietSince``
    (the lead's last engagement, or its creation)."""

    __tablename__ = "automation_firings"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    ruleId: Mapped[int] = mapped_column(ForeignKey("automation_rules.id"), nullable=False)
    leadId: Mapped[uuid.UUID] = mapped_column(ForeignKey("leads.id"), nullable=False)
    quietSince: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    dueAt: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    firedAt: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    createdAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )

    __table_args__ = (
        UniqueConstraint("ruleId", "leadId", "quietSince"),
        Index(None, "leadId", "firedAt"),
    )
