"""The lead-intake tables (docs/leads.md): leads, routing pools with their members and rules,
and the per-subscription API keys.

Two guarantees live here, not in application code: a lead cannot exist without an owner
(``ownerHubspotOwnerId`` is NOT NULL), and a submission is stored once
(``(subscriptionId, idempotencyKey)`` is UNIQUE).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

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
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.crm.rules.lead_status import LeadStatus, sql_values
from morpheus_pipelines.platform.store.model_base import Base


def _subscription() -> Mapped[Any]:
    return mapped_column(
        UUID(as_uuid=True), ForeignKey("subscriptions.id"), nullable=False, index=True
    )


def _now() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), nullable=False, server_default=func.now())


class RoutingPool(Base):
    """A group of reps that takes some leads; ``isDefault`` takes the rest. ``fallback*``:
    who owns a lead when no member is assignable (else the subscription's fallback rep, else the
    lead waits for an owner)."""

    __tablename__ = "routing_pools"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    name: Mapped[str] = mapped_column(Text, nullable=False)
    isDefault: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    fallbackSalesRepId: Mapped[int | None] = mapped_column(ForeignKey("sales_reps.id"))
    # A lead's owner must touch it (an outbound activity) within this, else it is re-routed.
    firstTouchSlaSeconds: Mapped[int | None] = mapped_column(Integer)
    createdAt: Mapped[datetime] = _now()

    __table_args__ = (
        UniqueConstraint("subscriptionId", "name"),
        CheckConstraint(
            '"firstTouchSlaSeconds" IS NULL OR "firstTouchSlaSeconds" > 0',
            name="first_touch_sla_positive",
        ),
        # one default pool per subscription
        Index(
            "uq_routing_pools_default",
            "subscriptionId",
            unique=True,
            postgresql_where=text('"isDefault"'),
        ),
    )


class RoutingPoolMember(Base):
    __tablename__ = "routing_pool_members"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    poolId: Mapped[int] = mapped_column(ForeignKey("routing_pools.id"), nullable=False)
    salesRepId: Mapped[int] = mapped_column(ForeignKey("sales_reps.id"), nullable=False)
    weight: Mapped[int] = mapped_column(Integer, nullable=False, server_default="1")
    isAssignable: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="true")
    createdAt: Mapped[datetime] = _now()

    __table_args__ = (
        UniqueConstraint("poolId", "salesRepId"),
        CheckConstraint("weight > 0", name="weight_positive"),
    )


class RoutingPoolRule(Base):
    """Leads of ``source`` and/or carrying ``campaignId`` go to ``poolId`` (the most specific
    rule wins, docs/leads.md)."""

    __tablename__ = "routing_pool_rules"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    poolId: Mapped[int] = mapped_column(ForeignKey("routing_pools.id"), nullable=False)
    source: Mapped[str | None] = mapped_column(Text)
    campaignId: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    createdAt: Mapped[datetime] = _now()

    __table_args__ = (
        CheckConstraint('"source" IS NOT NULL OR "campaignId" IS NOT NULL', name="says_something"),
    )


class Lead(Base):
    __tablename__ = "leads"

    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")
    )
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    idempotencyKey: Mapped[str] = mapped_column(Text, nullable=False)
    requestFingerprint: Mapped[str] = mapped_column(Text, nullable=False)
    source: Mapped[str] = mapped_column(Text, nullable=False)
    sourceSubmissionId: Mapped[str] = mapped_column(Text, nullable=False)
    campaignIds: Mapped[list[str]] = mapped_column(ARRAY(Text), nullable=False, server_default="{}")
    email: Mapped[str | None] = mapped_column(Text)
    phone: Mapped[str | None] = mapped_column(Text)  # E.164
    phoneExtension: Mapped[str | None] = mapped_column(Text)
    firstName: Mapped[str | None] = mapped_column(Text)
    lastName: Mapped[str | None] = mapped_column(Text)
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # The lead's HubSpot contact, once it has one: what HubSpot's webhooks find it by.
    hubspotContactId: Mapped[str | None] = mapped_column(Text, index=True)
    poolId: Mapped[int | None] = mapped_column(ForeignKey("routing_pools.id"))
    poolRuleId: Mapped[int | None] = mapped_column(ForeignKey("routing_pool_rules.id"))
    ownerSalesRepId: Mapped[int | None] = mapped_column(ForeignKey("sales_reps.id"))
    # The owner: a rep's HubSpot owner id (a pool member's or a fallback rep's); NULL while the
    # lead waits for an owner because nobody was assignable.
    ownerHubspotOwnerId: Mapped[str | None] = mapped_column(Text)
    ownerIsFallback: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    # A person chose this owner: routing (hand-over, waiting, first touch) never moves it back.
    ownerSetByHand: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    # When the lead stopped counting toward its owner's open load (closed, or untouched too
    # long): the load is released once, whichever comes first.
    loadReleasedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The first touch its pool's SLA asks for: due, done (an outbound activity of the owner),
    # or missed (then re-routed once).
    firstTouchDueAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    firstTouchAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    firstTouchMissedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The rep whose touch met or missed the deadline (a missed lead moves to another rep).
    firstTouchSalesRepId: Mapped[int | None] = mapped_column(ForeignKey("sales_reps.id"))
    status: Mapped[str] = mapped_column(  # a LeadStatus
        Text, nullable=False, server_default=LeadStatus.OPEN.value
    )
    # When the lead was won, lost or closed: the end of the touches attribution credits.
    closedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # A sender's test delivery (a Google Ads "send test data"): stored, closed, never routed.
    isTest: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    # The 201 answer, replayed verbatim to a duplicate delivery.
    response: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False)
    createdAt: Mapped[datetime] = _now()
    updatedAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now(), onupdate=func.now()
    )

    __table_args__ = (
        UniqueConstraint("subscriptionId", "idempotencyKey"),
        CheckConstraint("\"ownerHubspotOwnerId\" <> ''", name="owner_not_empty"),
        CheckConstraint(f"status IN ({sql_values(LeadStatus)})", name="known_status"),
        Index(None, "subscriptionId", "createdAt"),
        # Whose timeline an inbound WhatsApp message joins: the lead with that number.
        Index(None, "subscriptionId", "phone"),
        Index(
            "ix_leads_waiting",
            "subscriptionId",
            "createdAt",
            postgresql_where=text("\"ownerHubspotOwnerId\" IS NULL AND status = 'open'"),
        ),
        # A departing rep's open leads, found at hand-over.
        Index(
            "ix_leads_open_by_owner",
            "ownerSalesRepId",
            postgresql_where=text("status = 'open'"),
        ),
        Index(
            "ix_leads_first_touch_due",
            "firstTouchDueAt",
            postgresql_where=text(
                '"firstTouchDueAt" IS NOT NULL AND "firstTouchAt" IS NULL '
                'AND "firstTouchMissedAt" IS NULL'
            ),
        ),
    )


class LeadContactRetrieval(Base):
    """A lead whose contact fields its sender keeps (a Meta Lead Ads lead: the webhook names
    the lead, the Graph API has its answers): fetched after the lead was created with its owner,
    retried with back-off, ``completedAt`` once read, ``failedAt`` after the last attempt."""

    __tablename__ = "lead_contact_retrievals"

    leadId: Mapped[uuid.UUID] = mapped_column(ForeignKey("leads.id"), primary_key=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    provider: Mapped[str] = mapped_column(Text, nullable=False)
    externalId: Mapped[str] = mapped_column(Text, nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    nextAttemptAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    completedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    failedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    lastError: Mapped[str | None] = mapped_column(Text)
    createdAt: Mapped[datetime] = _now()

    __table_args__ = (
        Index(
            "ix_lead_contact_retrievals_due",
            "nextAttemptAt",
            postgresql_where=text('"completedAt" IS NULL AND "failedAt" IS NULL'),
        ),
    )


class IntakeApiKey(Base):
    """A subscription's API key for the intake service, stored only as its SHA-256."""

    __tablename__ = "intake_api_keys"

    id: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")
    )
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    keyHash: Mapped[str] = mapped_column(Text, nullable=False, unique=True)
    label: Mapped[str | None] = mapped_column(Text)
    # A publishable key goes in a web page: it may only create leads, and only from these
    # origins (docs/leads.md, "Browser forms"). A secret key has none.
    publishable: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    allowedOrigins: Mapped[list[str]] = mapped_column(
        ARRAY(Text), nullable=False, server_default="{}"
    )
    createdAt: Mapped[datetime] = _now()
    revokedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        CheckConstraint(
            'publishable = (cardinality("allowedOrigins") > 0)', name="origins_of_publishable"
        ),
    )


class IntakeRequestBudget(Base):
    """A request budget shared by every intake worker and host (docs/leads.md, "Request
    budgets"): one row per budgeted key, its theoretical arrival time
    (:mod:`~morpheus_pipelines.crm.rules.request_budget`). UNLOGGED: it is written on every
    request and worth nothing after a crash (the budgets start whole again), so its writes
    skip the WAL and their commits never wait for a flush."""

    __tablename__ = "intake_request_budgets"
    __table_args__ = {"prefixes": ["UNLOGGED"]}

    bucket: Mapped[str] = mapped_column(Text, primary_key=True)  # "key:<key id hex>"
    theoreticalArrival: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    admitted: Mapped[bool] = mapped_column(Boolean, nullable=False)  # the last request's fate


# -- The slow path after creation: enrichment, scores, duplicates (docs/leads.md) -----------


class LeadEnrichment(Base):
    """What Domain Intelligence says about the lead's email domain."""

    __tablename__ = "lead_enrichments"

    leadId: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("leads.id"), primary_key=True
    )
    emailDomain: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(Text, nullable=False)  # an EnrichmentStatus
    companyName: Mapped[str | None] = mapped_column(Text)
    officialWebsite: Mapped[str | None] = mapped_column(Text)
    industry: Mapped[str | None] = mapped_column(Text)
    employeeCount: Mapped[int | None] = mapped_column(Integer)
    country: Mapped[str | None] = mapped_column(Text)
    enrichedAt: Mapped[datetime] = _now()


class LeadScore(Base):
    __tablename__ = "lead_scores"

    leadId: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("leads.id"), primary_key=True
    )
    score: Mapped[int] = mapped_column(Integer, nullable=False)
    reasons: Mapped[list[str]] = mapped_column(JSONB, nullable=False)
    scoredAt: Mapped[datetime] = _now()


class LeadDuplicate(Base):
    """An older contact, or an earlier open lead of the same subscription, the lead matches.
    A match with an earlier open lead gives the lead that lead's owner and puts its form on
    that lead's timeline (docs/leads.md, "Duplicates"); nothing is merged or deleted."""

    __tablename__ = "lead_duplicates"

    leadId: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("leads.id"), primary_key=True
    )
    contactId: Mapped[int | None] = mapped_column(ForeignKey("contacts.id"))
    duplicateOfLeadId: Mapped[uuid.UUID | None] = mapped_column(
        UUID(as_uuid=True), ForeignKey("leads.id"), index=True
    )
    matchedOn: Mapped[str] = mapped_column(Text, nullable=False)  # a DuplicateMatch
    checkedAt: Mapped[datetime] = _now()
