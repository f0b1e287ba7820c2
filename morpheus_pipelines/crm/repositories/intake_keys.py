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
    ) -> None:
        session.add(
            IntakeApiKey(id=key_id, subscriptionId=subscription_id, keyHash=key_hash, label=label)
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

    def active_keys(self, session: Session) -> dict[uuid.UUID, tuple[uuid.UUID, str]]:
        """``{key id: (subscription id, stored hash)}`` of every key not revoked."""
        rows = session.execute(
            select(IntakeApiKey.id, IntakeApiKey.subscriptionId, IntakeApiKey.keyHash).where(
                IntakeApiKey.revokedAt.is_(None)
            )
        )
        return {key_id: (subscription_id, stored) for key_id, subscription_id, stored in rows}
