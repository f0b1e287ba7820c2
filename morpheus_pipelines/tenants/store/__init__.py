"""Repositories: the only sanctioned way to reach the warehouse (docs/data-layer.md).

Stateless; steps reach them through :class:`~.store.TenantStore`, and every method takes the
caller's ``Session`` first. Every public name is re-exported here.
"""

from morpheus_pipelines.platform.store.base import BaseRepository, RepositoryError
from morpheus_pipelines.platform.store.set_based import SetBasedRepository
from morpheus_pipelines.tenants.store.enriched_tenant import EnrichedTenantRepository
from morpheus_pipelines.tenants.store.hubspot_target_account import (
    HubSpotTargetAccountRepository,
)
from morpheus_pipelines.tenants.store.hubspot_target_sync_state import (
    HubSpotTargetSyncStateRepository,
)
from morpheus_pipelines.tenants.store.reports import (
    DailySummaryMetricRepository,
    DailySummaryRepository,
    WeeklyMetricsRepository,
)
from morpheus_pipelines.tenants.store.routing_decision import RoutingDecisionRepository
from morpheus_pipelines.tenants.store.tenant_bucket import (
    ActiveTenantRepository,
    SalesOwnedTenantRepository,
    TenantBucketRepository,
)
from morpheus_pipelines.tenants.store.tenant_candidate import TenantCandidateRepository
from morpheus_pipelines.tenants.store.tenant_score_snapshot import TenantScoreSnapshotRepository

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
