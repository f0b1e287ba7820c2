"""Repository of ``reengagement_segment_lists``: which HubSpot contact list feeds each
re-engagement segment of a subscription (``morpheus segment set``)."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import ReengagementSegmentList
from morpheus_pipelines.platform.store.base import BaseRepository


class ReengagementSegmentListRepository(BaseRepository[ReengagementSegmentList]):
    model_class = ReengagementSegmentList

    def set_list(
        self, session: Session, subscription_id: uuid.UUID, segment: str, hubspot_list_id: str
    ) -> str | None:
        """Point ``segment`` of the subscription at ``hubspot_list_id``; return the list id it
        had before (``None``: it had none). Setting the same list again changes nothing."""
        before = session.scalar(
            select(ReengagementSegmentList.hubspotListId)
            .where(
                ReengagementSegmentList.subscriptionId == subscription_id,
                ReengagementSegmentList.segment == segment,
            )
            .with_for_update()
        )
        if before == hubspot_list_id:
            return before
        statement = insert(ReengagementSegmentList).values(
            subscriptionId=subscription_id, segment=segment, hubspotListId=hubspot_list_id
        )
        session.execute(
            statement.on_conflict_do_update(
                index_elements=["subscriptionId", "segment"],
                set_={"hubspotListId": hubspot_list_id, "updatedAt": statement.excluded.updatedAt},
            )
        )
        return before

    def lists_of(self, session: Session, subscription_id: uuid.UUID) -> dict[str, str]:
        """Segment → HubSpot list id, for the segments that have one."""
        rows = session.execute(
            select(ReengagementSegmentList.segment, ReengagementSegmentList.hubspotListId).where(
                ReengagementSegmentList.subscriptionId == subscription_id
            )
        )
        return {segment: list_id for segment, list_id in rows}
