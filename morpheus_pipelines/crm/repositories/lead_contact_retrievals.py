"""``lead_contact_retrievals``: the leads whose contact fields their sender keeps, until they
are read (docs/senders.md, "Meta"). Due rows are claimed with ``SKIP LOCKED``, so two
retrieval runs never fetch one lead twice at once."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import LeadContactRetrieval


@dataclass(frozen=True)
class RetrievalBacklog:
    pending: int
    due: int
    failed: int
    oldest_pending_at: datetime | None


class LeadContactRetrievalRepository:
    def add(
        self,
        session: Session,
        lead_id: uuid.UUID,
        subscription_id: uuid.UUID,
        *,
        provider: str,
        external_id: str,
    ) -> None:
        session.execute(
            insert(LeadContactRetrieval)
            .values(
                leadId=lead_id,
                subscriptionId=subscription_id,
                provider=provider,
                externalId=external_id,
            )
            .on_conflict_do_nothing()
        )

    def claim_due(
        self, session: Session, subscription_id: uuid.UUID, *, now: datetime, limit: int
    ) -> list[LeadContactRetrieval]:
        """The due retrievals, oldest first, locked until the caller's transaction ends."""
        return list(
            session.scalars(
                select(LeadContactRetrieval)
                .where(
                    LeadContactRetrieval.subscriptionId == subscription_id,
                    LeadContactRetrieval.completedAt.is_(None),
                    LeadContactRetrieval.failedAt.is_(None),
                    LeadContactRetrieval.nextAttemptAt <= now,
                )
                .order_by(LeadContactRetrieval.nextAttemptAt)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
        )

    def settle(
        self,
        session: Session,
        lead_id: uuid.UUID,
        *,
        now: datetime,
        completed: bool = False,
        retry_at: datetime | None = None,
        error: str | None = None,
    ) -> None:
        """Completed, retried at ``retry_at``, or (neither) failed for good with ``error``."""
        values: dict[str, object] = {
            "attempts": LeadContactRetrieval.attempts + 1,
            "lastError": error,
        }
        if completed:
            values["completedAt"] = now
        elif retry_at is not None:
            values["nextAttemptAt"] = retry_at
        else:
            values["failedAt"] = now
        session.execute(
            update(LeadContactRetrieval)
            .where(LeadContactRetrieval.leadId == lead_id)
            .values(**values)
        )

    def backlog(
        self, session: Session, subscription_id: uuid.UUID, *, now: datetime
    ) -> RetrievalBacklog:
        open_ = LeadContactRetrieval.completedAt.is_(None) & LeadContactRetrieval.failedAt.is_(None)
        row = session.execute(
            select(
                func.count().filter(open_),
                func.count().filter(open_ & (LeadContactRetrieval.nextAttemptAt <= now)),
                func.count().filter(LeadContactRetrieval.failedAt.is_not(None)),
                func.min(LeadContactRetrieval.createdAt).filter(open_),
            ).where(LeadContactRetrieval.subscriptionId == subscription_id)
        ).one()
        return RetrievalBacklog(*row)
