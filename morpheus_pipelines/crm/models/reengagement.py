"""The re-engagement tables: segment members, their assignments, the reps' fairness counts and
the HubSpot contact list behind each segment."""

from __future__ import annotations

import uuid
from datetime import datetime
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from morpheus_pipelines.crm.models.core import (
    SalesRep,
    _created,
    _enum,
    _subscription,
    _updated,
)
from morpheus_pipelines.crm.rules.lead_status import sql_values
from morpheus_pipelines.crm.rules.ownership import (
    AssignmentOutcome,
    ReengagementSegment,
    WriteBackStatus,
)
from morpheus_pipelines.platform.store.model_base import Base


class ReengagementSegmentMember(Base):
    """A contact entering a re-engagement segment: the input of ``reengagement_assignments``.

    Read from the segment's HubSpot contact list by ``reengagement_segment_members`` (then
    ``sourceEventId`` is ``hubspot-contact:<id>`` and ``hubspotListId`` the list), or written by
    whatever detects an event (a dialer webhook; ``hubspotListId`` NULL).
    ``sourceEventId`` is the event's own id (click id, deal id and stage, provider call id),
    so a re-delivered event is the same member. A member is *new* while it has no row in
    ``reengagement_assignments`` and has not left its list (``leftListAt`` NULL)."""

    __tablename__ = "reengagement_segment_members"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    segment: Mapped[ReengagementSegment] = mapped_column(
        _enum(ReengagementSegment, "reengagement_segment"), nullable=False
    )
    sourceEventId: Mapped[str] = mapped_column(Text, nullable=False)
    contactId: Mapped[int] = mapped_column(ForeignKey("contacts.id"), nullable=False)
    # The deal's HubSpot owner, for the segments that route to it (no-show, lost deal).
    dealOwnerId: Mapped[str | None] = mapped_column(Text)
    enteredAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    hubspotListId: Mapped[str | None] = mapped_column(Text)
    # Set when the member is no longer on its list; the row is kept as history.
    leftListAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    createdAt: Mapped[datetime] = _created()

    __table_args__ = (
        UniqueConstraint("subscriptionId", "segment", "sourceEventId"),
        Index(None, "subscriptionId", "segment", "id"),
    )


class ReengagementAssignment(Base):
    """What the ownership block did with one segment member, and whether HubSpot has it yet.

    ``memberId`` is unique: a member is processed once, whatever re-runs or concurrent runs
    do. ``hubspotOwnerId`` / ``callAssignedTo`` hold the values written to HubSpot's
    ``hubspot_owner_id`` / ``call_assigned_to`` (NULL: that property is not written)."""

    __tablename__ = "reengagement_assignments"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    memberId: Mapped[int] = mapped_column(
        ForeignKey("reengagement_segment_members.id"), nullable=False, unique=True
    )
    segment: Mapped[ReengagementSegment] = mapped_column(
        _enum(ReengagementSegment, "reengagement_segment"), nullable=False
    )
    contactId: Mapped[int] = mapped_column(ForeignKey("contacts.id"), nullable=False)
    hubspotContactId: Mapped[str | None] = mapped_column(Text)
    outcome: Mapped[AssignmentOutcome] = mapped_column(
        _enum(AssignmentOutcome, "assignment_outcome"), nullable=False
    )
    roundRobin: Mapped[bool] = mapped_column(Boolean, nullable=False, server_default="false")
    salesRepId: Mapped[int | None] = mapped_column(ForeignKey("sales_reps.id"))
    previousOwnerId: Mapped[str | None] = mapped_column(Text)
    hubspotOwnerId: Mapped[str | None] = mapped_column(Text)
    callAssignedTo: Mapped[str | None] = mapped_column(Text)
    followUpTaskId: Mapped[int | None] = mapped_column(ForeignKey("follow_up_tasks.id"))
    listId: Mapped[str | None] = mapped_column(Text)
    writeBackStatus: Mapped[WriteBackStatus] = mapped_column(
        _enum(WriteBackStatus, "write_back_status"), nullable=False
    )
    writeBackAttempts: Mapped[int] = mapped_column(Integer, nullable=False, server_default="0")
    writeBackError: Mapped[str | None] = mapped_column(Text)
    runId: Mapped[str | None] = mapped_column(Text)
    assignedAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    writtenBackAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    salesRep: Mapped[SalesRep | None] = relationship(lazy="raise")

    __table_args__ = (
        Index(None, "subscriptionId", "writeBackStatus"),
        Index(None, "subscriptionId", "assignedAt"),
    )


class SalesRepFairness(Base):
    """The latest fairness report of a subscription's rotation (docs/ownership.md,
    "Fairness"): one row per rep, replaced on every ``reengagement_assignments`` run."""

    __tablename__ = "sales_rep_fairness"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    salesRepId: Mapped[int] = mapped_column(ForeignKey("sales_reps.id"), nullable=False)
    email: Mapped[str] = mapped_column(Text, nullable=False)
    isActive: Mapped[bool] = mapped_column(Boolean, nullable=False)
    assignments: Mapped[int] = mapped_column(Integer, nullable=False)
    expected: Mapped[Decimal] = mapped_column(Numeric(12, 2), nullable=False)
    deviation: Mapped[Decimal] = mapped_column(Numeric(12, 2), nullable=False)
    windowStart: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    windowEnd: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    runId: Mapped[str | None] = mapped_column(Text)
    computedAt: Mapped[datetime] = _created()

    __table_args__ = (UniqueConstraint("subscriptionId", "salesRepId"),)


class ReengagementSegmentList(Base):
    """The HubSpot contact list that feeds one re-engagement segment of a subscription, set
    with ``morpheus segment set``. ``segment`` is a ReengagementSegment value, kept as text
    with a CHECK so a new segment needs no enum migration. The ``reengagement_segment_members``
    asset checks that the list exists in HubSpot and is a contact list when it reads it."""

    __tablename__ = "reengagement_segment_lists"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = _subscription()
    segment: Mapped[str] = mapped_column(Text, nullable=False)
    hubspotListId: Mapped[str] = mapped_column(Text, nullable=False)
    createdAt: Mapped[datetime] = _created()
    updatedAt: Mapped[datetime] = _updated()

    __table_args__ = (
        UniqueConstraint("subscriptionId", "segment"),
        CheckConstraint(f"segment IN ({sql_values(ReengagementSegment)})", name="known_segment"),
    )
