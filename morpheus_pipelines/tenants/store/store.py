"""``TenantStore``: every tenant repository within one caller-owned session.

Steps take a store instead of reaching for module-level repository singletons, so what a step
touches is visible in its signature and a test can hand it a store over its own session. The
repositories are stateless; the store holds nothing but the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlalchemy.orm import Session

from morpheus_pipelines.tenants.store.enriched_tenant import EnrichedTenantRepository
from morpheus_pipelines.tenants.store.hubspot_prepared_snapshot import (
    HubSpotPreparedSnapshotRepository,
)
from morpheus_pipelines.tenants.store.hubspot_target_account import (
    HubSpotTargetAccountRepository,
)
from morpheus_pipelines.tenants.store.hubspot_target_sync_state import (
    HubSpotTargetSyncStateRepository,
)
from morpheus_pipelines.tenants.store.report_deliveries import ReportDeliveryRepository
from morpheus_pipelines.tenants.store.reports import (
    DailySummaryMetricRepository,
    DailySummaryRepository,
    WeeklyMetricsRepository,
)
from morpheus_pipelines.tenants.store.routing_decision import (
    RoutingDecisionRepository,
    RoutingInputRepository,
    RoutingStateRepository,
)
from morpheus_pipelines.tenants.store.scoring_models import ScoringModelRepository
from morpheus_pipelines.tenants.store.tenant_bucket import TenantBucketRepository
from morpheus_pipelines.tenants.store.tenant_candidate import TenantCandidateRepository
from morpheus_pipelines.tenants.store.tenant_score_snapshot import TenantScoreSnapshotRepository


@dataclass(frozen=True)
class TenantStore:
    """The tenant tables as seen through ``session``: ``store.candidates.write_partition(
    store.session, ...)``. The caller owns the session and its transaction."""

    session: Session

    accounts: ClassVar[HubSpotTargetAccountRepository] = HubSpotTargetAccountRepository()
    sync_state: ClassVar[HubSpotTargetSyncStateRepository] = HubSpotTargetSyncStateRepository()
    prepared_snapshots: ClassVar[HubSpotPreparedSnapshotRepository] = (
        HubSpotPreparedSnapshotRepository()
    )
    candidates: ClassVar[TenantCandidateRepository] = TenantCandidateRepository()
    enriched: ClassVar[EnrichedTenantRepository] = EnrichedTenantRepository()
    buckets: ClassVar[TenantBucketRepository] = TenantBucketRepository()
    decisions: ClassVar[RoutingDecisionRepository] = RoutingDecisionRepository()
    routing_inputs: ClassVar[RoutingInputRepository] = RoutingInputRepository()
    routing_states: ClassVar[RoutingStateRepository] = RoutingStateRepository()
    scores: ClassVar[TenantScoreSnapshotRepository] = TenantScoreSnapshotRepository()
    scoring_models: ClassVar[ScoringModelRepository] = ScoringModelRepository()
    daily: ClassVar[DailySummaryRepository] = DailySummaryRepository()
    daily_metrics: ClassVar[DailySummaryMetricRepository] = DailySummaryMetricRepository()
    weekly: ClassVar[WeeklyMetricsRepository] = WeeklyMetricsRepository()
    deliveries: ClassVar[ReportDeliveryRepository] = ReportDeliveryRepository()
