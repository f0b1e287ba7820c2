"""Repositories: the only sanctioned way to reach the warehouse (docs/data-layer.md).

Stateless, instantiated once at module level by their callers; every method takes the caller's
``Session`` first. Every public name is re-exported here.
"""

from morpheus_pipelines.repositories.base import BaseRepository, RepositoryError
from morpheus_pipelines.repositories.enriched_tenant import EnrichedTenantRepository
from morpheus_pipelines.repositories.hubspot_target_account import (
    HubSpotTargetAccountRepository,
)
from morpheus_pipelines.repositories.hubspot_target_sync_state import (
    HubSpotTargetSyncStateRepository,
)
from morpheus_pipelines.repositories.reports import (
    DailySummaryMetricRepository,
    DailySummaryRepository,
    WeeklyMetricsRepository,
)
from morpheus_pipelines.repositories.routing_decision import RoutingDecisionRepository
from morpheus_pipelines.repositories.set_based import SetBasedRepository
from morpheus_pipelines.repositories.tenant_bucket import (
    ActiveTenantRepository,
    SalesOwnedTenantRepository,
    TenantBucketRepository,
)
from morpheus_pipelines.repositories.tenant_candidate import TenantCandidateRepository
from morpheus_pipelines.repositories.tenant_score_snapshot import TenantScoreSnapshotRepository

__all__ = [
    "ActiveTenantRepository",
    "BaseRepository",
    "DailySummaryMetricRepository",
    "DailySummaryRepository",
    "EnrichedTenantRepository",
    "HubSpotTargetAccountRepository",
    "HubSpotTargetSyncStateRepository",
    "RepositoryError",
    "RoutingDecisionRepository",
    "SalesOwnedTenantRepository",
    "SetBasedRepository",
    "TenantBucketRepository",
    "TenantCandidateRepository",
    "TenantScoreSnapshotRepository",
    "WeeklyMetricsRepository",
]
