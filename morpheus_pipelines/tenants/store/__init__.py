"""Repositories: the only sanctioned way to reach the warehouse (docs/data-layer.md).

Stateless; steps reach them through :class:`~.store.TenantStore`, and every method takes the
caller's ``Session`` first. Every public name is re-exported here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Where each name lives, imported on first use: the repositories bring pandas and pyarrow, and
# the code location imports this package for its table definitions only (`tables`, `models`).
_EXPORTS = {
    "ActiveTenantRepository": ".tenant_bucket",
    "BaseRepository": "morpheus_pipelines.platform.store.base",
    "DailySummaryMetricRepository": ".reports",
    "DailySummaryRepository": ".reports",
    "EnrichedTenantRepository": ".enriched_tenant",
    "HubSpotTargetAccountRepository": ".hubspot_target_account",
    "HubSpotTargetSyncStateRepository": ".hubspot_target_sync_state",
    "RepositoryError": "morpheus_pipelines.platform.store.base",
    "RoutingDecisionRepository": ".routing_decision",
    "SalesOwnedTenantRepository": ".tenant_bucket",
    "SetBasedRepository": "morpheus_pipelines.platform.store.set_based",
    "TenantBucketRepository": ".tenant_bucket",
    "TenantCandidateRepository": ".tenant_candidate",
    "TenantScoreSnapshotRepository": ".tenant_score_snapshot",
    "WeeklyMetricsRepository": ".reports",
}

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


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
