"""Repository of the per-list sync state (002 §4.2)."""

from __future__ import annotations

from morpheus_pipelines.models import HubSpotTargetSyncState
from morpheus_pipelines.repositories.base import BaseRepository


class HubSpotTargetSyncStateRepository(BaseRepository[HubSpotTargetSyncState]):
    model_class = HubSpotTargetSyncState
