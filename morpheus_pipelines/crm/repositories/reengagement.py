"""Repositories of the ownership slice (docs/ownership.md): the re-engagement segments' members,
what the ownership block did with each, the HubSpot write-backs still owed, and the fairness
report. Not among the 16 exports of ``morpheus_pipelines.crm.repositories`` (those are the
data layer's); import them from this module.

Two guards live in the schema and the queries, not in the callers:

* ``reengagement_assignments.memberId`` is UNIQUE, so a member is processed once;
* members and pending write-backs are claimed with ``FOR UPDATE SKIP LOCKED``, so concurrent
  runs share the work instead of doing it twice or waiting for each other.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import (
    Activity,
    ActivityType,
    Contact,
    FollowUpTask,
    ReengagementAssignment,
    ReengagementSegment,
    ReengagementSegmentMember,
    SalesRep,
    SalesRepFairness,
    WriteBackStatus,
)
from morpheus_pipelines.platform.store.base import BaseRepository


@dataclass(frozen=True)
class ClaimedMember:
    """A new segment member with what the ownership block needs of its contact."""

    member_id: int
    segment: ReengagementSegment
    source_event_id: str
    contact_id: int
    deal_owner_id: str | None
    hubspot_contact_id: str | None
    hubspot_owner_id: str | None
    contact_email: str | None


@dataclass(frozen=True)
class ListMember:
    """A segment member read from a HubSpot list, as the list reader compares it."""

    member_id: int
    left: bool


@dataclass(frozen=True)
class PendingWriteBack:
    """An assignment whose HubSpot half is still owed."""

    assignment_id: int
    hubspot_contact_id: str
    hubspot_owner_id: str | None
    call_assigned_to: str | None
    list_id: str | None
    previous_owner_id: str | None  # the owner the decision saw
    attempts: int


@dataclass(frozen=True)
class RepAssignmentCount:
    """One rep of a subscription and its round-robin assignments in a window."""

    sales_rep_id: int
    email: str
    is_active: bool
    eligible: bool
    assignments: int


class ReengagementSegmentMemberRepository(BaseRepository[ReengagementSegmentMember]):
    model_class = ReengagementSegmentMember

    def add_members(self, session: Session, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert members, ignoring events already recorded (``(subscriptionId, segment,
        sourceEventId)`` is unique: a re-delivered event is the same member). Returns how many
        were new."""
        if not rows:
            return 0
        statement = (
            pg_insert(ReengagementSegmentMember)
            .values([dict(row) for row in rows])
            .on_conflict_do_nothing(index_elements=["subscriptionId", "segment", "sourceEventId"])
            .returning(ReengagementSegmentMember.id)
        )
        return len(session.execute(statement).all())

    def list_members(
        self, session: Session, subscription_id: uuid.UUID, segment: ReengagementSegment
    ) -> dict[str, ListMember]:
        """The segment's members read from HubSpot lists, by ``sourceEventId``, locked until
        the caller's transaction ends so two readers of one list apply one after the other."""
        statement = (
            select(
                ReengagementSegmentMember.sourceEventId,
                ReengagementSegmentMember.id,
                ReengagementSegmentMember.leftListAt,
            )
            .where(
                ReengagementSegmentMember.subscriptionId == subscription_id,
                ReengagementSegmentMember.segment == segment,
                ReengagementSegmentMember.hubspotListId.is_not(None),
            )
            .with_for_update()
        )
        return {
            source: ListMember(member_id, left_at is not None)
            for source, member_id, left_at in session.execute(statement)
        }

    def mark_left(self, session: Session, member_ids: Iterable[int], at: datetime) -> int:
        """Mark members as no longer on their list (kept, never claimed)."""
        ids = list(member_ids)
        if not ids:
            return 0
        statement = (
            update(ReengagementSegmentMember)
            .where(ReengagementSegmentMember.id.in_(ids))
            .values(leftListAt=at)
        )
        return session.execute(statement).rowcount

    def mark_back(self, session: Session, member_ids: Iterable[int], list_id: str) -> int:
        """Members back on a list after leaving it: waiting again, unless already processed."""
        ids = list(member_ids)
        if not ids:
            return 0
        statement = (
            update(ReengagementSegmentMember)
            .where(ReengagementSegmentMember.id.in_(ids))
            .values(leftListAt=None, hubspotListId=list_id)
        )
        return session.execute(statement).rowcount

    def count_new(self, session: Session, subscription_id: uuid.UUID) -> dict[str, int]:
        """New (unprocessed) members per segment."""
        statement = (
            select(ReengagementSegmentMember.segment, func.count())
            .where(
                ReengagementSegmentMember.subscriptionId == subscription_id,
                ~_processed(ReengagementSegmentMember.id),
                ReengagementSegmentMember.leftListAt.is_(None),
            )
            .group_by(ReengagementSegmentMember.segment)
        )
        return {segment.value: count for segment, count in session.execute(statement)}

    def newest_new_id(self, session: Session, subscription_id: uuid.UUID) -> int | None:
        """The id of the newest unprocessed member (what a sensor keys its runs on)."""
        statement = select(func.max(ReengagementSegmentMember.id)).where(
            ReengagementSegmentMember.subscriptionId == subscription_id,
            ~_processed(ReengagementSegmentMember.id),
            ReengagementSegmentMember.leftListAt.is_(None),
        )
        return session.scalar(statement)

    def claim_new(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        segment: ReengagementSegment,
        *,
        limit: int,
        after_member_id: int | None = None,
    ) -> list[ClaimedMember]:
        """Up to ``limit`` new members of a segment, oldest first (after ``after_member_id``,
        when given), locked until the caller's transaction ends; members another transaction
        holds are skipped, not waited for."""
        statement = (
            select(
                ReengagementSegmentMember.id,
                ReengagementSegmentMember.segment,
                ReengagementSegmentMember.sourceEventId,
                ReengagementSegmentMember.contactId,
                ReengagementSegmentMember.dealOwnerId,
                Contact.hubspotContactId,
                Contact.hubspotOwnerId,
                Contact.email,
            )
            .join(Contact, Contact.id == ReengagementSegmentMember.contactId)
            .where(
                ReengagementSegmentMember.subscriptionId == subscription_id,
                ReengagementSegmentMember.segment == segment,
                ~_processed(ReengagementSegmentMember.id),
                ReengagementSegmentMember.leftListAt.is_(None),
                ReengagementSegmentMember.id > (after_member_id or 0),
            )
            .order_by(ReengagementSegmentMember.id)
            .limit(limit)
            .with_for_update(of=ReengagementSegmentMember, skip_locked=True)
        )
        return [ClaimedMember(*row) for row in session.execute(statement)]


def _processed(member_id: Any) -> Any:
    return exists().where(ReengagementAssignment.memberId == member_id)


class ReengagementAssignmentRepository(BaseRepository[ReengagementAssignment]):
    model_class = ReengagementAssignment

    def record(self, session: Session, rows: Sequence[Mapping[str, Any]]) -> list[int]:
        """Insert the outcomes of a batch; a member recorded twice violates the unique
        ``memberId`` and raises, which rolls the caller's whole batch back."""
        if not rows:
            return []
        statement = insert(ReengagementAssignment).returning(ReengagementAssignment.id)
        return list(session.scalars(statement, [dict(row) for row in rows]))

    def contacts_called_by_a_human_since(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        contact_ids: Iterable[int],
        since: datetime,
        *,
        ai_owner_id: str,
    ) -> set[int]:
        """Contacts with a call engagement since ``since`` owned by a human: an owner id that
        is set and is not the AI owner (an AI call never counts as a human follow-up)."""
        ids = list(contact_ids)
        if not ids:
            return set()
        call_owner = Activity.metadata_["hubspot_owner_id"].astext
        statement = select(Activity.contactId).where(
            Activity.subscriptionId == subscription_id,
            Activity.contactId.in_(ids),
            Activity.type == ActivityType.CALL,
            Activity.occurredAt >= since,
            call_owner.is_not(None),
            call_owner != "",
            call_owner != ai_owner_id,
        )
        return set(session.scalars(statement.distinct()))

    def claim_pending_write_backs(
        self, session: Session, subscription_id: uuid.UUID, *, limit: int
    ) -> list[PendingWriteBack]:
        """Up to ``limit`` owed write-backs, oldest first, locked until the caller's
        transaction ends (another run skips them)."""
        statement = (
            select(
                ReengagementAssignment.id,
                ReengagementAssignment.hubspotContactId,
                ReengagementAssignment.hubspotOwnerId,
                ReengagementAssignment.callAssignedTo,
                ReengagementAssignment.listId,
                ReengagementAssignment.previousOwnerId,
                ReengagementAssignment.writeBackAttempts,
            )
            .where(
                ReengagementAssignment.subscriptionId == subscription_id,
                ReengagementAssignment.writeBackStatus == WriteBackStatus.PENDING,
            )
            .order_by(ReengagementAssignment.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        return [PendingWriteBack(*row) for row in session.execute(statement)]

    def record_write_back_attempt(
        self,
        session: Session,
        assignment_ids: Iterable[int],
        status: WriteBackStatus,
        *,
        error: str | None = None,
    ) -> None:
        """Count one attempt on each write-back and set its status: ``done`` (stamped),
        ``rejected`` with the reason, or still ``pending`` with the (token-free) failure."""
        ids = list(assignment_ids)
        if ids:
            session.execute(
                update(ReengagementAssignment)
                .where(ReengagementAssignment.id.in_(ids))
                .values(
                    writeBackStatus=status,
                    writeBackError=error,
                    writeBackAttempts=ReengagementAssignment.writeBackAttempts + 1,
                    writtenBackAt=func.now() if status is WriteBackStatus.DONE else None,
                )
            )

    def oldest_pending_id(self, session: Session, subscription_id: uuid.UUID) -> int | None:
        return session.scalar(
            select(func.min(ReengagementAssignment.id)).where(
                ReengagementAssignment.subscriptionId == subscription_id,
                ReengagementAssignment.writeBackStatus == WriteBackStatus.PENDING,
            )
        )

    def count_by_write_back_status(
        self, session: Session, subscription_id: uuid.UUID
    ) -> dict[str, int]:
        statement = (
            select(ReengagementAssignment.writeBackStatus, func.count())
            .where(ReengagementAssignment.subscriptionId == subscription_id)
            .group_by(ReengagementAssignment.writeBackStatus)
        )
        return {status.value: count for status, count in session.execute(statement)}

    def round_robin_counts(
        self, session: Session, subscription_id: uuid.UUID, since: datetime
    ) -> list[RepAssignmentCount]:
        """Every rep of the subscription with its round-robin assignments since ``since``,
        and whether the rotation could pick it today (active with a HubSpot owner id)."""
        counted = (
            select(ReengagementAssignment.salesRepId, func.count().label("n"))
            .where(
                ReengagementAssignment.subscriptionId == subscription_id,
                ReengagementAssignment.roundRobin.is_(True),
                ReengagementAssignment.assignedAt >= since,
            )
            .group_by(ReengagementAssignment.salesRepId)
            .subquery()
        )
        eligible = and_(
            SalesRep.isActive.is_(True),
            SalesRep.hubspotOwnerId.is_not(None),
            SalesRep.hubspotOwnerId != "",
        )
        statement = (
            select(
                SalesRep.id,
                SalesRep.email,
                SalesRep.isActive,
                eligible,
                func.coalesce(counted.c.n, 0),
            )
            .outerjoin(counted, counted.c.salesRepId == SalesRep.id)
            .where(SalesRep.subscriptionId == subscription_id)
            .order_by(SalesRep.id)
        )
        return [RepAssignmentCount(*row) for row in session.execute(statement)]


class SalesRepFairnessRepository(BaseRepository[SalesRepFairness]):
    model_class = SalesRepFairness

    def record_for_subscription(
        self, session: Session, subscription_id: uuid.UUID, rows: Sequence[Mapping[str, Any]]
    ) -> None:
        """The subscription's latest report: each rep's row updated in place (one per rep,
        ``(subscriptionId, salesRepId)`` UNIQUE), never deleted; a rep the report no longer
        lists keeps the row of the last report that did, and :meth:`list_for_subscription`
        reads the latest report only. One transaction with the caller's."""
        if not rows:
            return
        statement = pg_insert(SalesRepFairness).values([dict(row) for row in rows])
        columns = [name for name in rows[0] if name not in ("subscriptionId", "salesRepId")]
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["subscriptionId", "salesRepId"],
                set_={name: statement.excluded[name] for name in columns}
                | {"computedAt": func.now()},
            )
        )

    def list_for_subscription(
        self, session: Session, subscription_id: uuid.UUID
    ) -> list[SalesRepFairness]:
        """The rows of the subscription's latest report (its ``windowEnd``)."""
        latest = (
            select(func.max(SalesRepFairness.windowEnd))
            .where(SalesRepFairness.subscriptionId == subscription_id)
            .scalar_subquery()
        )
        statement = (
            select(SalesRepFairness)
            .where(
                SalesRepFairness.subscriptionId == subscription_id,
                SalesRepFairness.windowEnd == latest,
            )
            .order_by(SalesRepFairness.salesRepId)
        )
        return list(session.scalars(statement))


class FollowUpEscalationRepository(BaseRepository[FollowUpTask]):
    """The one write escalation makes to a task."""

    model_class = FollowUpTask

    def advance_stage(
        self, session: Session, task_id: int, *, from_stage: int, max_stage: int
    ) -> bool:
        """Move a task from ``from_stage`` to the next stage, never past ``max_stage``.

        Conditional on the stage the caller read, so a concurrent escalation of the same task
        advances it once: the second ``UPDATE`` waits for the first's row lock, then matches
        nothing. False when nothing changed."""
        if from_stage >= max_stage:
            return False
        result = session.execute(
            update(FollowUpTask)
            .where(FollowUpTask.id == task_id, FollowUpTask.escalationStage == from_stage)
            .values(escalationStage=from_stage + 1, updatedAt=func.now())
        )
        return bool(result.rowcount)
