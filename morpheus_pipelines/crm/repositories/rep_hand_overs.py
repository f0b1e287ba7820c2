"""Repository of ``rep_hand_overs`` and of the work a departed rep still holds (docs/
ownership.md, "When a rep leaves"). Not among the exports of
``morpheus_pipelines.crm.repositories``; import it from this module.

A departed rep's open leads and live tasks are read row-locked (``FOR UPDATE``, waiting for a
request that holds one), so a close, a hand reassignment or a second hand-over of the same
rep serialise with the move, and a row that changed meanwhile drops out of the read.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import exists, func, or_, select, update
from sqlalchemy.orm import Session, joinedload

from morpheus_pipelines.crm.models import (
    FollowUpTask,
    FollowUpTaskStatus,
    Lead,
    RepHandOver,
    SalesRep,
)
from morpheus_pipelines.crm.rules.hand_over import HandOverTally, merged_moves
from morpheus_pipelines.crm.rules.lead_status import LeadStatus
from morpheus_pipelines.platform.store.base import BaseRepository

LIVE_TASK = (FollowUpTaskStatus.PENDING, FollowUpTaskStatus.IN_PROGRESS)


def _holds_work(rep_id: object) -> object:
    """The rep still owns an open lead or a live task."""
    return or_(
        exists().where(Lead.ownerSalesRepId == rep_id, Lead.status == LeadStatus.OPEN),
        exists().where(FollowUpTask.salesRepId == rep_id, FollowUpTask.status.in_(LIVE_TASK)),
    )


class RepHandOverRepository(BaseRepository[RepHandOver]):
    model_class = RepHandOver

    def departed_with_work(self, session: Session, subscription_id: uuid.UUID) -> list[int]:
        """The subscription's inactive reps who still own an open lead or a live task."""
        return list(
            session.scalars(
                select(SalesRep.id)
                .where(
                    SalesRep.subscriptionId == subscription_id,
                    SalesRep.isActive.is_(False),
                    _holds_work(SalesRep.id),
                )
                .order_by(SalesRep.id)
            )
        )

    def departed_rep(self, session: Session, rep_id: int) -> SalesRep | None:
        """The rep, share-locked until commit, only while inactive: a rep reactivated since
        is not handed over."""
        return session.scalars(
            select(SalesRep)
            .where(SalesRep.id == rep_id, SalesRep.isActive.is_(False))
            .with_for_update(read=True)
        ).one_or_none()

    def start(self, session: Session, subscription_id: uuid.UUID, rep_id: int) -> int:
        row = RepHandOver(subscriptionId=subscription_id, salesRepId=rep_id)
        session.add(row)
        session.flush()
        return row.id

    def open_leads(self, session: Session, rep_id: int, limit: int) -> list[Lead]:
        """The rep's open leads, oldest first, locked until commit."""
        return list(
            session.scalars(
                select(Lead)
                .where(Lead.ownerSalesRepId == rep_id, Lead.status == LeadStatus.OPEN)
                .order_by(Lead.createdAt, Lead.id)
                .limit(limit)
                .with_for_update(of=Lead)
            )
        )

    def live_tasks(self, session: Session, rep_id: int, limit: int) -> list[FollowUpTask]:
        """The rep's PENDING and IN_PROGRESS tasks with their contacts, oldest due first,
        locked until commit."""
        return list(
            session.scalars(
                select(FollowUpTask)
                .options(joinedload(FollowUpTask.contact))
                .where(FollowUpTask.salesRepId == rep_id, FollowUpTask.status.in_(LIVE_TASK))
                .order_by(FollowUpTask.dueAt, FollowUpTask.id)
                .limit(limit)
                .with_for_update(of=FollowUpTask)
            )
        )

    def give_back_load(self, session: Session, rep_id: int, leads: int) -> None:
        """The departed rep's open load, less the counted leads taken from them."""
        if leads:
            session.execute(
                update(SalesRep)
                .where(SalesRep.id == rep_id)
                .values(openLeads=func.greatest(SalesRep.openLeads - leads, 0))
            )

    def add(self, session: Session, hand_over_id: int, tally: HandOverTally) -> None:
        """Add one chunk's tally to the hand-over's row (in the chunk's transaction)."""
        row = session.get(RepHandOver, hand_over_id, with_for_update=True)
        row.leadsRerouted += tally.leads_rerouted
        row.leadsToFallback += tally.leads_to_fallback
        row.leadsWaiting += tally.leads_waiting
        row.tasksMoved += tally.tasks_moved
        row.tasksUnowned += tally.tasks_unowned
        row.moves = merged_moves(row.moves, tally.moves)
        session.flush()

    def finish(self, session: Session, hand_over_id: int) -> RepHandOver:
        row = session.get(RepHandOver, hand_over_id, with_for_update=True)
        row.finishedAt = func.now()
        session.flush()
        session.refresh(row)
        return row

    def since(
        self, session: Session, subscription_id: uuid.UUID, since: datetime
    ) -> list[tuple[RepHandOver, SalesRep]]:
        """The subscription's hand-overs started since ``since``, oldest first, with the rep
        who left."""
        return [
            (row, rep)
            for row, rep in session.execute(
                select(RepHandOver, SalesRep)
                .join(SalesRep, SalesRep.id == RepHandOver.salesRepId)
                .where(
                    RepHandOver.subscriptionId == subscription_id,
                    RepHandOver.startedAt >= since,
                )
                .order_by(RepHandOver.startedAt, RepHandOver.id)
            )
        ]

    def rep_names(self, session: Session, rep_ids: list[int]) -> dict[str, str]:
        """How the summary calls each rep: their name, else their email."""
        rows = session.execute(
            select(SalesRep.id, SalesRep.firstName, SalesRep.lastName, SalesRep.email).where(
                SalesRep.id.in_(rep_ids)
            )
        )
        return {
            str(row.id): " ".join(p for p in (row.firstName, row.lastName) if p) or row.email
            for row in rows
        }
