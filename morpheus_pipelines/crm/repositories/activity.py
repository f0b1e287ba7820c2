"""Repository of activities: one timeline per contact across every channel
(docs/data-layer.md, "The CRM tables").

Activities are written by their callers through the base ``upsert`` on
``(subscriptionId, externalId)`` — ``externalId`` is the source's own id (a HubSpot engagement
id, a webhook's message id), which is what makes re-running a sync over an overlapping
watermark window free of duplicates. The engagement sync updates ``type``,
``hubspotEngagementId``, ``subject``, ``body``, ``status``, ``direction``, ``contactId``,
``contactEmail``, ``hubspotContactId``, ``metadata`` and ``updatedAt``. The upsert speaks
column names, so the JSON column is ``"metadata"`` there, although the ORM attribute is
``metadata_`` (SQLAlchemy reserves ``metadata``).
"""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Activity, ActivityType
from morpheus_pipelines.platform.store.base import BaseRepository


class ActivityRepository(BaseRepository[Activity]):
    model_class = Activity

    def get_by_external_id(
        self, session: Session, *, subscription_id: uuid.UUID, external_id: str
    ) -> Activity | None:
        """Lookup on the unique ``(subscriptionId, externalId)`` pair: an external id is only
        unique within the tenant whose source issued it."""
        statement = select(Activity).where(
            Activity.subscriptionId == subscription_id, Activity.externalId == external_id
        )
        return session.scalars(statement).first()

    def written_to_hubspot_as(
        self, session: Session, subscription_id: uuid.UUID, engagement_id: str
    ) -> bool:
        """Whether one of our own activities (an AI call the outbox wrote) is this HubSpot
        engagement: the engagement sync must not add it a second time."""
        statement = (
            select(Activity.id)
            .where(
                Activity.subscriptionId == subscription_id,
                Activity.hubspotEngagementId == engagement_id,
                Activity.externalId != engagement_id,
            )
            .limit(1)
        )
        return session.scalar(statement) is not None

    def list_by_contact(
        self,
        session: Session,
        contact_id: int,
        *,
        activity_type: ActivityType | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Activity]:
        """One contact's timeline, newest ``occurredAt`` first — when it happened, not when
        the sync wrote it — optionally of one :class:`ActivityType`. ``id`` breaks ties so
        that pages are stable; the ``(contactId, occurredAt)`` index serves the query."""
        statement = select(Activity).where(Activity.contactId == contact_id)
        if activity_type is not None:
            statement = statement.where(Activity.type == activity_type)
        statement = (
            statement.order_by(Activity.occurredAt.desc(), Activity.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return list(session.scalars(statement))
