"""Repository of follow-up tasks (docs/data-layer.md, "FollowUpTaskRepository").

"Now" is the database's ``now()``, the start time of the caller's transaction, never the
worker's clock: every worker agrees on it whatever its clock skew, and two queries inside one
``with get_session()`` block (the dedupe guard, then the insert it protects) see the same
instant.

``salesRep`` and ``contact`` are ``lazy="raise"``. The queries whose results are formatted
after the session has closed (a Slack reminder or escalation naming the rep and the contact)
load them eagerly with ``joinedload``: both are many-to-one, so the join adds no rows and a
``LIMIT`` still counts tasks.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy import case, exists, func, or_, select, update
from sqlalchemy.orm import Session, joinedload

from morpheus_pipelines.crm.models import (
    Contact,
    FollowUpTask,
    FollowUpTaskStatus,
    FollowUpTaskType,
    SalesRep,
)
from morpheus_pipelines.platform.store.base import BaseRepository

# An escalation is sent at stages 0, 1 and 2; a task at stage 3 has been escalated three times
# and is never picked up again (docs/data-layer.md: escalation is capped at three).
MAX_ESCALATION_STAGE = 3
STALE_AFTER = timedelta(days=1)

_ACTIVE = (FollowUpTaskStatus.PENDING, FollowUpTaskStatus.IN_PROGRESS)
_RETRYABLE_HUBSPOT = (FollowUpTaskStatus.PENDING, FollowUpTaskStatus.FAILED)


class FollowUpTaskRepository(BaseRepository[FollowUpTask]):
    model_class = FollowUpTask

    def list_pending_due_soon(
        self, session: Session, subscription_id: uuid.UUID, window_hours: int = 24
    ) -> list[FollowUpTask]:
        """PENDING tasks due before ``now() + window_hours``, most overdue first.

        Already-overdue PENDING tasks are included (there is no lower bound on ``dueAt``): this
        is the rep's to-do digest, and a task that slipped past its due time is still the rep's
        work, the most urgent of all — dropping it the moment it became late would hide exactly
        the tasks that need attention. Escalation (``list_stale_for_escalation``) is a separate
        channel on top, not a replacement. ``salesRep`` is eager-loaded so the digest can be
        formatted after the session has closed.
        """
        horizon = func.now() + timedelta(hours=window_hours)
        statement = (
            select(FollowUpTask)
            .options(joinedload(FollowUpTask.salesRep))
            .where(
                FollowUpTask.subscriptionId == subscription_id,
                FollowUpTask.status == FollowUpTaskStatus.PENDING,
                FollowUpTask.dueAt <= horizon,
            )
            .order_by(FollowUpTask.dueAt.asc(), FollowUpTask.id.asc())
        )
        return list(session.scalars(statement))

    def list_pending_with_hubspot_task(
        self, session: Session, subscription_id: uuid.UUID, limit: int = 50
    ) -> list[FollowUpTask]:
        """PENDING or FAILED tasks mirrored as a HubSpot task (``hubspotTaskId`` set).

        FAILED first, so a retry batch always spends its ``limit`` on the tasks whose last sync
        failed before it looks at the rest; within each status, oldest ``dueAt`` then ``id``,
        a total order, so successive batches are reproducible and nothing is starved.
        """
        failed_first = case((FollowUpTask.status == FollowUpTaskStatus.FAILED, 0), else_=1)
        statement = (
            select(FollowUpTask)
            .where(
                FollowUpTask.subscriptionId == subscription_id,
                FollowUpTask.status.in_(_RETRYABLE_HUBSPOT),
                FollowUpTask.hubspotTaskId.is_not(None),
            )
            .order_by(failed_first, FollowUpTask.dueAt.asc(), FollowUpTask.id.asc())
            .limit(limit)
        )
        return list(session.scalars(statement))

    def has_active_task_for_contact(
        self,
        session: Session,
        *,
        contact_id: int,
        subscription_id: uuid.UUID,
        task_type: FollowUpTaskType = FollowUpTaskType.CALL,
    ) -> bool:
        """The dedupe guard every re-engagement handler calls before creating work.

        True when the contact already has a PENDING or IN_PROGRESS task of ``task_type`` in
        this subscription that is not past due (``dueAt >= now()``; a task due exactly now
        still counts). A past-due task does not block new work: it is what escalation is
        for, and a fresh task is the way back onto the rep's list. COMPLETED, FAILED and
        CANCELLED tasks never block, nor does a task of a rep who is no longer active (it is
        being handed over; the contact is free to be assigned again).
        """
        statement = select(
            exists().where(
                FollowUpTask.contactId == contact_id,
                FollowUpTask.subscriptionId == subscription_id,
                FollowUpTask.type == task_type,
                FollowUpTask.status.in_(_ACTIVE),
                FollowUpTask.dueAt >= func.now(),
                # A departed rep's task never holds the contact: it is handed over.
                or_(
                    FollowUpTask.salesRepId.is_(None),
                    FollowUpTask.salesRepId.in_(select(SalesRep.id).where(SalesRep.isActive)),
                ),
            )
        )
        return bool(session.scalar(statement))

    def list_stale_for_escalation(
        self, session: Session, subscription_id: uuid.UUID
    ) -> list[FollowUpTask]:
        """PENDING tasks due at least a day ago that have been escalated fewer than 3 times.

        Oldest ``dueAt`` first, then ``id``. ``salesRep`` and ``contact`` are eager-loaded:
        the escalation message names both and is sent after the session has closed.
        """
        statement = (
            select(FollowUpTask)
            .options(joinedload(FollowUpTask.salesRep), joinedload(FollowUpTask.contact))
            .where(
                FollowUpTask.subscriptionId == subscription_id,
                FollowUpTask.status == FollowUpTaskStatus.PENDING,
                FollowUpTask.dueAt <= func.now() - STALE_AFTER,
                FollowUpTask.escalationStage < MAX_ESCALATION_STAGE,
            )
            .order_by(FollowUpTask.dueAt.asc(), FollowUpTask.id.asc())
        )
        return list(session.scalars(statement))


def call_list_contacts(
    session: Session, subscription_id: uuid.UUID, *, due_by: datetime
) -> dict[int, list[str]]:
    """Each active rep's call list: the HubSpot contacts of their PENDING call tasks due by
    ``due_by`` (every active rep with a HubSpot owner id is a key, with an empty list when
    nothing is due)."""
    reps = session.scalars(
        select(SalesRep.id).where(
            SalesRep.subscriptionId == subscription_id,
            SalesRep.isActive,
            func.coalesce(SalesRep.hubspotOwnerId, "") != "",
        )
    )
    lists: dict[int, list[str]] = {rep_id: [] for rep_id in reps}
    rows = session.execute(
        select(FollowUpTask.salesRepId, Contact.hubspotContactId)
        .distinct()
        .join(Contact, Contact.id == FollowUpTask.contactId)
        .where(
            FollowUpTask.subscriptionId == subscription_id,
            FollowUpTask.salesRepId.in_(list(lists)),
            FollowUpTask.status == FollowUpTaskStatus.PENDING,
            FollowUpTask.type == FollowUpTaskType.CALL,
            FollowUpTask.dueAt <= due_by,
            Contact.hubspotContactId.is_not(None),
        )
        .order_by(FollowUpTask.salesRepId, Contact.hubspotContactId)
    )
    for rep_id, contact_id in rows:
        lists[rep_id].append(contact_id)
    return lists


def departed_reps_with_call_list(session: Session, subscription_id: uuid.UUID) -> list[int]:
    """Inactive reps who still have a HubSpot call list (to be emptied)."""
    return list(
        session.scalars(
            select(SalesRep.id).where(
                SalesRep.subscriptionId == subscription_id,
                SalesRep.isActive.is_(False),
                SalesRep.hubspotCallSegmentId.is_not(None),
            )
        )
    )


def complete_from_hubspot(
    session: Session, subscription_id: uuid.UUID, hubspot_task_ids: list[str]
) -> int:
    """Mark the open tasks mirrored as these HubSpot tasks COMPLETED (a rep ticked them off
    in HubSpot); tasks already completed or cancelled are left alone. Returns how many
    changed."""
    if not hubspot_task_ids:
        return 0
    result = session.execute(
        update(FollowUpTask)
        .where(
            FollowUpTask.subscriptionId == subscription_id,
            FollowUpTask.hubspotTaskId.in_(hubspot_task_ids),
            FollowUpTask.status.in_(_ACTIVE),
        )
        .values(status=FollowUpTaskStatus.COMPLETED, updatedAt=func.now())
    )
    return result.rowcount
