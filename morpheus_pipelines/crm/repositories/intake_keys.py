"""Repository of the intake API keys (docs/leads.md, "Keys"): a subscription's keys, stored
only as their SHA-256. Not among the 16 exports of ``morpheus_pipelines.crm.repositories``;
import it from this module.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import IntakeApiKey
from morpheus_pipelines.platform.store.base import BaseRepository


class IntakeApiKeyRepository(BaseRepository[IntakeApiKey]):
    model_class = IntakeApiKey

    def create(
        self,
        session: Session,
        key_id: uuid.UUID,
        subscription_id: uuid.UUID,
        key_hash: str,
        label: str | None,
        *,
        origins: tuple[str, ...] = (),
    ) -> None:
        """A secret key, or with ``origins`` a publishable one usable only from them."""
        session.add(
            IntakeApiKey(
                id=key_id,
                subscriptionId=subscription_id,
                keyHash=key_hash,
                label=label,
                publishable=bool(origins),
                allowedOrigins=list(origins),
            )
        )
        session.flush()

    def revoke(self, session: Session, key_id: uuid.UUID) -> bool:
        """Revoke a key; False when it does not exist or was already revoked."""
        result = session.execute(
            update(IntakeApiKey)
            .where(IntakeApiKey.id == key_id, IntakeApiKey.revokedAt.is_(None))
            .values(revokedAt=func.now())
        )
        return bool(result.rowcount)

    def active_keys(
        self, session: Session
    ) -> dict[uuid.UUID, tuple[uuid.UUID, str, bool, frozenset[str]]]:
        """``{key id: (subscription id, stored hash, publishable, origins)}`` of every key not
        revoked."""
        rows = session.execute(
            select(
                IntakeApiKey.id,
                IntakeApiKey.subscriptionId,
                IntakeApiKey.keyHash,
                IntakeApiKey.publishable,
                IntakeApiKey.allowedOrigins,
            ).where(IntakeApiKey.revokedAt.is_(None))
        )
        return {
            row.id: (
                row.subscriptionId,
                row.keyHash,
                row.publishable,
                frozenset(row.allowedOrigins),
            )
            for row in rows
        }
