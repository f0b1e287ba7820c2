"""The CRM tables (docs/data-layer.md, "The CRM tables").

Column names are camelCase and identical to the ORM attribute names, so the lists passed to
``upsert`` (``conflict_columns=["subscriptionId", "externalId"]``) are literal SQL
identifiers and grep finds every place a column takes part in a conflict. The one exception
is ``activities.metadata``: SQLAlchemy reserves the attribute name ``metadata``, so the
attribute is ``metadata_`` over the column ``metadata`` (the upsert contract speaks column
names, so ``"metadata"`` is what callers write).

Nothing is hard-deleted: ``isActive``, ``isDeleted``, lifecycle stages and task statuses say
that a row no longer counts.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column, relationship

from morpheus_pipelines.platform.store.model_base import Base

# An activity's direction, lower case: ``inbound`` (the customer wrote or called) or
# ``outbound`` (we did); ``NULL`` for what has none (a note, a meeting).
ACTIVITY_DIRECTION_CHECK = "direction IS NULL OR direction IN ('inbound', 'outbound')"


class SellerPlatform(enum.StrEnum):
    AMAZON = "AMAZON"
    SHOPIFY = "SHOPIFY"
    EBAY = "EBAY"
    WALMART = "WALMART"
    ETSY = "ETSY"
    OTHER = "OTHER"


class LifeCycleStage(enum.StrEnum):
    """Where a seller or contact is in the funnel; ``NEW`` is what enrichment picks up."""

    NEW = "NEW"
    ENRICHED = "ENRICHED"
    QUALIFIED = "QUALIFIED"
    CONTACTED = "CONTACTED"
    CUSTOMER = "CUSTOMER"
    CHURNED = "CHURNED"
    DISQUALIFIED = "DISQUALIFIED"


class ActivityType(enum.StrEnum):
    """One timeline for every channel: a form, a WhatsApp message, a call, an email, a
    meeting, a note or a task."""

    FORM = "FORM"
    WHATSAPP = "WHATSAPP"
    CALL = "CALL"
    EMAIL = "EMAIL"
    MEETING = "MEETING"
    NOTE = "NOTE"
    TASK = "TASK"


class FollowUpTaskType(enum.StrEnum):
    CALL = "CALL"
    EMAIL = "EMAIL"
    WHATSAPP = "WHATSAPP"


class FollowUpTaskStatus(enum.StrEnum):
    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


def _enum(kind: type[enum.StrEnum], name: str) -> Enum:
    """A PostgreSQL enum type storing the member values."""
    return Enum(kind, name=name, values_callable=lambda members: [m.value for m in members])


def _created() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), nullable=False, server_default=func.now())


def _updated() -> Mapped[datetime]:
    return mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )


def _subscription(nullable: bool = False) -> Mapped[Any]:
    return mapped_column(
        UUID(as_uuid=True), ForeignKey("subscriptions.id"), nullable=nullable, index=True
    )


class Subscription(Base):
    """A workspace: every CRM row belongs to one."""

    __tablename__ = "subscriptions"

    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")
    )
    name: Mapped[str] = mapped_column(Text, nullable=False)
    # The HubSpot account (portal) whose webhook deliveries belong to this workspace.
    hubspotPortalId: Mapped[int | None] = mapped_column(BigInteger, unique=True)
    # The region a phone number without a country code is read in (ISO 3166 alpha-2).
    defaultRegion: Mapped[str | None] = mapped_column(Text)
    # Who gets a lead when no pool has anyone assignable (use_alter: reps point back here).
    fallbackSalesRepId: Mapped[int | None] = mapped_column(
        ForeignKey("sales_reps.id", use_alter=True, name="fk_subscriptions_fallbackSalesRepId")
    )
    # The senders' ids that pick this subscription: a Facebook page, a WhatsApp Business
    # phone number, and a hash of the Google Ads lead-form key (the key itself is not kept).
    metaPageId: Mapped[str | None] = mapped_column(Text, unique=True)
    whatsappPhoneNumberId: Mapped[str | None] = mapped_column(Text, unique=True)
    googleAdsKeyHash: Mapped[str | None] = mapped_column(Text, unique=True)
    createdAt: Mapped[datetime] = _created()


class Seller(Base):
    __tablename__ = "sellers"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    sellerId: Mapped[str] = mapped_column(Text, nullable=False, unique=True)
    platform: Mapped[SellerPlatform] = mapped_column(
        _enum(SellerPlatform, "seller_platform"), nullable=False
    )
    businessName: Mapped[str | None] = mapped_column(Text)
    website: Mapped[str | None] = mapped_column(Text)
    country: Mapped[str | None] = mapped_column(Text)
    lifeCycleStage: Mapped[LifeCycleStage] = mapped_column(
        _enum(LifeCycleStage, "life_cycle_stage"),
        nullable=False,
        server_default=LifeCycleStage.NEW.value,
    )
    enrichedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    payoutPainScore: Mapped[Decimal | None] = mapped_column(Numeric(6, 2))
    isSuspended: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class Contact(Base):
    """A person. ``email`` and ``phone`` are unique across all contacts when present."""

    __tablename__ = "contacts"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    sellerId: Mapped[int | None] = mapped_column(ForeignKey("sellers.id"), index=True)
    email: Mapped[str | None] = mapped_column(Text, unique=True)
    phone: Mapped[str | None] = mapped_column(Text, unique=True)
    mobilePhone: Mapped[str | None] = mapped_column(Text)
    firstName: Mapped[str | None] = mapped_column(Text)
    lastName: Mapped[str | None] = mapped_column(Text)
    jobTitle: Mapped[str | None] = mapped_column(Text)
    lifeCycleStage: Mapped[LifeCycleStage] = mapped_column(
        _enum(LifeCycleStage, "life_cycle_stage"),
        nullable=False,
        server_default=LifeCycleStage.NEW.value,
    )
    hubspotContactId: Mapped[str | None] = mapped_column(Text, index=True)
    hubspotOwnerId: Mapped[str | None] = mapped_column(Text)
    callAssignedTo: Mapped[str | None] = mapped_column(Text)
    hubspotSyncPriority: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    hubspotLastSyncedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class Activity(Base):
    """One entry of the timeline; ``externalId`` is the source's id (a HubSpot engagement id,
    a webhook's message id), unique per subscription."""

    __tablename__ = "activities"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    externalId: Mapped[str] = mapped_column(Text, nullable=False)
    type: Mapped[ActivityType] = mapped_column(_enum(ActivityType, "activity_type"), nullable=False)
    hubspotEngagementId: Mapped[str | None] = mapped_column(Text)
    subject: Mapped[str | None] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str | None] = mapped_column(Text)
    direction: Mapped[str | None] = mapped_column(Text)
    contactId: Mapped[int | None] = mapped_column(ForeignKey("contacts.id"))
    # The lead whose timeline this is (docs/leads.md); ``leads`` is defined in crm.leads.
    leadId: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True), ForeignKey("leads.id"))
    contactEmail: Mapped[str | None] = mapped_column(Text)
    hubspotContactId: Mapped[str | None] = mapped_column(Text)
    metadata_: Mapped[dict[str, Any] | None] = mapped_column("metadata", JSONB)
    # A hash of what an intake caller posted under this ``externalId``: the same id with a
    # different body is refused, not silently merged (docs/leads.md).
    requestFingerprint: Mapped[str | None] = mapped_column(Text)
    occurredAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    __table_args__ = (
        UniqueConstraint("subscriptionId", "externalId"),
        # One spelling: the engagement and WhatsApp predicates match the lower case only.
        CheckConstraint(ACTIVITY_DIRECTION_CHECK, name="known_direction"),
        Index(None, "contactId", "occurredAt"),
        Index(None, "leadId", "occurredAt"),
        # The engagement sync's question: is this HubSpot engagement one we wrote?
        Index(None, "subscriptionId", "hubspotEngagementId"),
    )


class SalesRep(Base):
    """A rep of one subscription, mirrored from HubSpot owners. ``isActive`` is the
    eligibility flag of every selector."""

    __tablename__ = "sales_reps"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    email: Mapped[str] = mapped_column(Text, nullable=False)
    firstName: Mapped[str | None] = mapped_column(Text)
    lastName: Mapped[str | None] = mapped_column(Text)
    profileId: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    hubspotOwnerId: Mapped[str | None] = mapped_column(Text)
    nooksUserId: Mapped[str | None] = mapped_column(Text)
    activeListId: Mapped[str | None] = mapped_column(Text)
    hubspotCallSegmentId: Mapped[str | None] = mapped_column(Text)
    isActive: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="true")
    # Lead intake's load balance (docs/leads.md): open leads owned, and when one last came.
    openLeads: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    # When the rep can be given a lead: working hours in their own time zone (IANA name), not
    # before ``awayUntil`` (a holiday), and while below ``maxOpenLeads`` (NULL: no limit).
    timeZone: Mapped[str | None] = mapped_column(Text)
    workingHours: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    awayUntil: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    maxOpenLeads: Mapped[int | None] = mapped_column(Integer)
    lastLeadAssignedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Set by `morpheus rep deactivate`: the rep has left though HubSpot may still list them,
    # so the mirror keeps them inactive until `morpheus rep reactivate` clears it.
    leftAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    __table_args__ = (
        UniqueConstraint("subscriptionId", "email"),
        CheckConstraint('"openLeads" >= 0', name="open_leads_not_negative"),
        CheckConstraint(
            '"maxOpenLeads" IS NULL OR "maxOpenLeads" >= 0', name="max_open_leads_not_negative"
        ),
    )


class CampaignTarget(Base):
    """A contact on a dialer campaign; written through the base ``upsert`` on
    ``(campaignId, hubspotContactId)`` (no repository of its own)."""

    __tablename__ = "campaign_targets"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    campaignId: Mapped[str] = mapped_column(Text, nullable=False)
    hubspotContactId: Mapped[str] = mapped_column(Text, nullable=False)
    contactId: Mapped[int | None] = mapped_column(ForeignKey("contacts.id"))
    name: Mapped[str | None] = mapped_column(Text)
    email: Mapped[str | None] = mapped_column(Text)
    phone: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    __table_args__ = (UniqueConstraint("campaignId", "hubspotContactId"),)


class TargetPhoneNumber(Base):
    """A phone number to call; ``syncTwilio`` false until Twilio Lookup has described it."""

    __tablename__ = "target_phone_numbers"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    phoneNumber: Mapped[str] = mapped_column(Text, nullable=False)
    contactId: Mapped[int | None] = mapped_column(ForeignKey("contacts.id"))
    lineType: Mapped[str | None] = mapped_column(Text)
    carrier: Mapped[str | None] = mapped_column(Text)
    syncTwilio: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    syncPriority: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    isActive: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="true")
    isDeleted: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class Call(Base):
    """A dialer call, keyed by the provider's own call id."""

    __tablename__ = "calls"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    providerCallId: Mapped[str] = mapped_column(Text, nullable=False, unique=True)
    targetId: Mapped[int | None] = mapped_column(ForeignKey("campaign_targets.id"))
    targetPhoneNumbersId: Mapped[int | None] = mapped_column(ForeignKey("target_phone_numbers.id"))
    salesRepId: Mapped[int | None] = mapped_column(ForeignKey("sales_reps.id"))
    targetPhoneNumber: Mapped[str | None] = mapped_column(Text)
    direction: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str | None] = mapped_column(Text)
    disposition: Mapped[str | None] = mapped_column(Text)
    durationMs: Mapped[int | None] = mapped_column(BigInteger)
    durationSec: Mapped[int | None] = mapped_column(Integer)
    startTimestamp: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    hubspotEngagementId: Mapped[str | None] = mapped_column(Text)
    hubspotSyncStatus: Mapped[str | None] = mapped_column(Text)
    contactName: Mapped[str | None] = mapped_column(Text)
    notes: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    target: Mapped[CampaignTarget | None] = relationship(lazy="raise")


class Configs(Base):
    """Runtime state keyed globally (a round-robin cursor key embeds its subscription)."""

    __tablename__ = "configs"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID | None] = _subscription(nullable=True)
    key: Mapped[str] = mapped_column(Text, nullable=False, unique=True)
    value: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class FollowUpTask(Base):
    """Work for a rep about a contact; escalated at most three times when it goes stale."""

    __tablename__ = "follow_up_tasks"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    contactId: Mapped[int] = mapped_column(ForeignKey("contacts.id"), nullable=False)
    salesRepId: Mapped[int | None] = mapped_column(ForeignKey("sales_reps.id"))
    type: Mapped[FollowUpTaskType] = mapped_column(
        _enum(FollowUpTaskType, "follow_up_task_type"), nullable=False
    )
    status: Mapped[FollowUpTaskStatus] = mapped_column(
        _enum(FollowUpTaskStatus, "follow_up_task_status"),
        nullable=False,
        server_default=FollowUpTaskStatus.PENDING.value,
    )
    dueAt: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    hubspotTaskId: Mapped[str | None] = mapped_column(Text)
    escalationStage: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    segment: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    salesRep: Mapped[SalesRep | None] = relationship(lazy="raise")
    contact: Mapped[Contact] = relationship(lazy="raise")

    __table_args__ = (
        Index(None, "subscriptionId", "status", "dueAt"),
        # A departing rep's live tasks, found at hand-over.
        Index(
            "ix_follow_up_tasks_live_by_rep",
            "salesRepId",
            postgresql_where=text("status IN ('PENDING', 'IN_PROGRESS')"),
        ),
    )


class Email(Base):
    """An email template of a campaign."""

    __tablename__ = "emails"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    campaignId: Mapped[str | None] = mapped_column(Text)
    subject: Mapped[str | None] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class EmailVariation(Base):
    __tablename__ = "email_variations"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    emailId: Mapped[int] = mapped_column(ForeignKey("emails.id"), nullable=False, index=True)
    subject: Mapped[str | None] = mapped_column(Text)
    body: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()


class EmailCampaignTarget(Base):
    """A recipient of an email campaign, with the categorisation of their reply."""

    __tablename__ = "email_campaign_targets"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    campaignId: Mapped[str] = mapped_column(Text, nullable=False)
    email: Mapped[str] = mapped_column(Text, nullable=False)
    category: Mapped[str | None] = mapped_column(Text)
    categorisedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    categoryModel: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    __table_args__ = (UniqueConstraint("campaignId", "email"),)


class TargetEmails(Base):
    """An address email campaigns may write to, with its newsletter opt-out."""

    __tablename__ = "target_emails"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    email: Mapped[str] = mapped_column(Text, nullable=False)
    newsletterOptedOut: Mapped[bool] = mapped_column(
        Boolean, nullable=False, server_default="false"
    )
    newsletterOptOutAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    isDeleted: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    __table_args__ = (UniqueConstraint("subscriptionId", "email"),)


# -- Ownership: the re-engagement segments and what the ownership block did with them --------
# (docs/ownership.md)
