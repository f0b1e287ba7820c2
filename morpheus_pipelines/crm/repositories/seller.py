"""Repository of sellers: the marketplace accounts every contact, call and score hangs off
(docs/data-layer.md, "The CRM tables").

The two ``get_pending_*`` queries are the work queues of the enrichment and scoring backfill
schedules. They define what "pending" means, and their oldest-first ordering — made total by
``id`` so that rows created in the same instant are served in a fixed order — is what makes a
backfill that takes ``limit`` rows per tick fair: a row can only be overtaken by rows that are
older than it, so every row is reached after a bounded number of ticks.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import LifeCycleStage, Seller, SellerPlatform
from morpheus_pipelines.platform.store.base import BaseRepository

# Columns an upsert by ``sellerId`` never rewrites: the key itself, the surrogate key, and the
# moment the row was first seen.
_IMMUTABLE_ON_UPSERT = frozenset({"sellerId", "id", "createdAt"})


class SellerRepository(BaseRepository[Seller]):
    model_class = Seller

    def get_by_seller_id(self, session: Session, seller_id: str) -> Seller | None:
        """Lookup by the marketplace's own id (unique), not the primary key: it is the id
        every inbound scrape and webhook carries."""
        return session.scalars(select(Seller).where(Seller.sellerId == seller_id)).first()

    def get_by_platform(
        self, session: Session, platform: SellerPlatform, *, limit: int = 100, offset: int = 0
    ) -> list[Seller]:
        """Sellers of one marketplace, newest ``createdAt`` first (``id`` breaks ties, so
        consecutive pages neither repeat nor skip a row)."""
        statement = (
            select(Seller)
            .where(Seller.platform == platform)
            .order_by(Seller.createdAt.desc(), Seller.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return list(session.scalars(statement))

    def get_by_subscription(
        self, session: Session, subscription_id: uuid.UUID, *, limit: int = 100, offset: int = 0
    ) -> list[Seller]:
        """One tenant's sellers, newest first (ties by ``id``, for stable pages)."""
        statement = (
            select(Seller)
            .where(Seller.subscriptionId == subscription_id)
            .order_by(Seller.createdAt.desc(), Seller.id.desc())
            .limit(limit)
            .offset(offset)
        )
        return list(session.scalars(statement))

    def get_pending_enrichment(self, session: Session, *, limit: int = 10) -> list[Seller]:
        """The enrichment queue: sellers still at ``NEW`` that were never enriched, oldest
        first, so the backfill drains the backlog from its old end instead of starving it
        behind fresh arrivals. Setting ``enrichedAt`` (or moving the stage on) is what takes
        a seller off the queue."""
        statement = (
            select(Seller)
            .where(Seller.lifeCycleStage == LifeCycleStage.NEW, Seller.enrichedAt.is_(None))
            .order_by(Seller.createdAt.asc(), Seller.id.asc())
            .limit(limit)
        )
        return list(session.scalars(statement))

    def get_pending_scoring(self, session: Session, *, limit: int = 10) -> list[Seller]:
        """The scoring queue: enriched sellers without a ``payoutPainScore``, in the order
        they were enriched (oldest ``enrichedAt`` first), so scoring follows enrichment
        fairly. Writing the score takes a seller off the queue."""
        statement = (
            select(Seller)
            .where(Seller.enrichedAt.is_not(None), Seller.payoutPainScore.is_(None))
            .order_by(Seller.enrichedAt.asc(), Seller.id.asc())
            .limit(limit)
        )
        return list(session.scalars(statement))

    def get_suspended(self, session: Session, *, limit: int = 100, offset: int = 0) -> list[Seller]:
        """Sellers the marketplace has suspended, in ``id`` order: the source gives no order,
        and a stable one keeps the pages consistent."""
        statement = (
            select(Seller)
            .where(Seller.isSuspended.is_(True))
            .order_by(Seller.id.asc())
            .limit(limit)
            .offset(offset)
        )
        return list(session.scalars(statement))

    def upsert_by_seller_id(self, session: Session, data: Mapping[str, Any]) -> Seller:
        """Insert the seller or update it in place, keyed by ``sellerId``.

        Every key of ``data`` is written except ``sellerId``, ``id`` and ``createdAt``: the
        natural key, the surrogate key and the first-seen time never change once the row
        exists. Keys absent from ``data`` are left alone, so a partial payload cannot blank
        a column it does not mention. The base ``upsert`` stamps ``updatedAt`` on an update,
        so a re-delivered message still says when it last landed.
        """
        update_columns = [key for key in data if key not in _IMMUTABLE_ON_UPSERT]
        return self.upsert(
            session, data, conflict_columns=["sellerId"], update_columns=update_columns
        )
