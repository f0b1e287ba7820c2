"""SQLAlchemy models of the warehouse (docs/data-layer.md). Alembic migrations create these
tables."""

from morpheus_pipelines.crm import leads as _lead_models  # noqa: F401  (lead intake)
from morpheus_pipelines.crm import models as _crm_models  # noqa: F401  (the CRM tables)
from morpheus_pipelines.models.base import Base
from morpheus_pipelines.models.hubspot import HubSpotTargetAccount, HubSpotTargetSyncState
from morpheus_pipelines.models.reports import DailySummaryMetric, DailySummaryTenant, WeeklyMetric
from morpheus_pipelines.models.scores import TenantScoreSnapshot
from morpheus_pipelines.models.tenants import (
    ActiveTenant,
    CandidateSelection,
    EnrichedTenant,
    RoutingDecision,
    RoutingInput,
    RoutingState,
    SalesOwnedTenant,
    TenantCandidate,
)

__all__ = [
    "ActiveTenant",
    "Base",
    "CandidateSelection",
    "DailySummaryMetric",
    "DailySummaryTenant",
    "EnrichedTenant",
    "HubSpotTargetAccount",
    "HubSpotTargetSyncState",
    "RoutingDecision",
    "RoutingInput",
    "RoutingState",
    "SalesOwnedTenant",
    "TenantCandidate",
    "TenantScoreSnapshot",
    "WeeklyMetric",
]
