"""The APAC tenant tables (docs/data-layer.md). Alembic migrations create these tables."""

from morpheus_pipelines.platform.store.model_base import Base
from morpheus_pipelines.tenants.store.models.hubspot import (
    HubSpotPreparedSnapshot,
    HubSpotTargetAccount,
    HubSpotTargetSyncState,
)
from morpheus_pipelines.tenants.store.models.reports import (
    DailySummaryMetric,
    DailySummaryTenant,
    ReportDelivery,
    WeeklyMetric,
)
from morpheus_pipelines.tenants.store.models.scores import (
    ScoringModelRecord,
    TenantScoreDay,
    TenantScoreSnapshot,
    TenantScoreVersion,
)
from morpheus_pipelines.tenants.store.models.tenants import (
    ActiveTenant,
    CandidateSelection,
    EnrichedTenant,
    EnrichedTenantDay,
    EnrichedTenantVersion,
    RoutingDecision,
    RoutingDecisionDay,
    RoutingDecisionVersion,
    RoutingInput,
    RoutingState,
    SalesOwnedTenant,
    TenantCandidate,
    TenantCandidateDay,
    TenantCandidateVersion,
)

__all__ = [
    "ActiveTenant",
    "Base",
    "CandidateSelection",
    "DailySummaryMetric",
    "DailySummaryTenant",
    "EnrichedTenant",
    "EnrichedTenantDay",
    "EnrichedTenantVersion",
    "HubSpotPreparedSnapshot",
    "HubSpotTargetAccount",
    "HubSpotTargetSyncState",
    "ReportDelivery",
    "RoutingDecision",
    "RoutingDecisionDay",
    "RoutingDecisionVersion",
    "RoutingInput",
    "RoutingState",
    "SalesOwnedTenant",
    "ScoringModelRecord",
    "TenantCandidate",
    "TenantCandidateDay",
    "TenantCandidateVersion",
    "TenantScoreDay",
    "TenantScoreSnapshot",
    "TenantScoreVersion",
    "WeeklyMetric",
]
