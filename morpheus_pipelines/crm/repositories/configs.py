"""``ConfigsRepository``: runtime state as key/value rows (docs/data-layer.md,
"ConfigsRepository"; the keys in use are catalogued under "Runtime state in configs").

``key`` is unique across all subscriptions, not per subscription, so a key that belongs to one
tenant embeds the tenant's id (the round-robin cursor is ``dialer_follow_up_rep_rr:<uuid>``).
"""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Configs
from morpheus_pipelines.platform.store.base import BaseRepository


class ConfigsRepository(BaseRepository[Configs]):
    model_class = Configs

    def get_by_key(self, session: Session, key: str) -> Configs | None:
        """The row of a (globally unique) key, or ``None``."""
        return session.scalars(select(Configs).where(Configs.key == key)).one_or_none()

    def get_value(self, session: Session, key: str) -> str | None:
        """The value of a key, or ``None`` when the key is absent (or its value is NULL).

        Selects the column rather than the entity on purpose: an entity already in the
        session's identity map keeps its loaded attributes when queried again (and sessions
        here do not expire on commit), whereas a column select always returns what the
        database holds now. The round-robin cursor is read this way right after taking its
        lock, and a stale read would hand out a slot twice.
        """
        return session.scalars(select(Configs.value).where(Configs.key == key)).one_or_none()

    def get_by_subscription(
        self, session: Session, subscription_id: uuid.UUID, *, limit: int = 100, offset: int = 0
    ) -> list[Configs]:
        """One page of a tenant's rows, in key order so pages are stable."""
        statement = (
            select(Configs)
            .where(Configs.subscriptionId == subscription_id)
            .order_by(Configs.key)
            .limit(limit)
            .offset(offset)
        )
        return list(session.scalars(statement))

    def set_value(
        self, session: Session, key: str, value: str | None, subscription_id: uuid.UUID | None
    ) -> Configs:
        """Create the key or overwrite its value, idempotently (one ``INSERT … ON CONFLICT``).

        Only ``value`` is updated on conflict: the key's owning subscription is fixed when the
        key is first written.
        """
        return self.upsert(
            session,
            {"key": key, "value": value, "subscriptionId": subscription_id},
            conflict_columns=["key"],
            update_columns=["value"],
        )
