"""Repository of the per-list sync state (docs/pipeline.md)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.base import BaseRepository
from morpheus_pipelines.tenants.store.models import HubSpotTargetSyncState


class HubSpotTargetSyncStateRepository(BaseRepository[HubSpotTargetSyncState]):
    model_class = HubSpotTargetSyncState

    def record_success(
        self,
        session: Session,
        *,
        list_id: str,
        sync_id: str,
        synced_at: datetime,
        list_total: int,
        snapshot_hash: str,
    ) -> HubSpotTargetSyncState:
        """Write the last-success fields and the attempt fields of a successful refresh."""
        return self.upsert(
            session,
            {
                "list_id": list_id,
                "last_successful_sync_id": sync_id,
                "last_successful_sync_at": synced_at,
                "last_successful_list_total": list_total,
                "last_successful_snapshot_hash": snapshot_hash,
                "last_attempt_at": synced_at,
                "last_attempt_status": "success",
                "last_error": None,
            },
            conflict_columns=["list_id"],
        )

    def record_failure(
        self, session: Session, *, list_id: str, attempted_at: datetime, error: str
    ) -> HubSpotTargetSyncState:
        """A failed attempt touches only the attempt fields (docs/pipeline.md)."""
        return self.upsert(
            session,
            {
                "list_id": list_id,
                "last_attempt_at": attempted_at,
                "last_attempt_status": "failed",
                "last_error": error,
            },
            conflict_columns=["list_id"],
        )
