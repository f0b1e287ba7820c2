"""``subscriptions`` as the request paths read it: a subscription's phone region, and which
subscription a sender's id (a Facebook page, a WhatsApp Business number, a Google Ads key's
hash) belongs to. Each is one indexed lookup; the columns are UNIQUE, so an id names at most
one subscription."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute, Session

from morpheus_pipelines.crm.models import Subscription


class SubscriptionRepository:
    def default_region(self, session: Session, subscription_id: uuid.UUID) -> str | None:
        """The region a national phone number of this subscription is read in."""
        return session.scalar(
            select(Subscription.defaultRegion).where(Subscription.id == subscription_id)
        )

    def by_meta_page_id(self, session: Session, page_id: str) -> uuid.UUID | None:
        return self._by(session, Subscription.metaPageId, page_id)

    def by_whatsapp_phone_number_id(self, session: Session, number_id: str) -> uuid.UUID | None:
        return self._by(session, Subscription.whatsappPhoneNumberId, number_id)

    def by_google_ads_key_hash(self, session: Session, key_hash: str) -> uuid.UUID | None:
        return self._by(session, Subscription.googleAdsKeyHash, key_hash)

    def whatsapp_phone_number_id(self, session: Session, subscription_id: uuid.UUID) -> str | None:
        """The WhatsApp Business number the subscription's messages are sent from."""
        return session.scalar(
            select(Subscription.whatsappPhoneNumberId).where(Subscription.id == subscription_id)
        )

    @staticmethod
    def _by(
        session: Session, column: InstrumentedAttribute[str | None], value: str
    ) -> uuid.UUID | None:
        return session.scalar(select(Subscription.id).where(column == value))
