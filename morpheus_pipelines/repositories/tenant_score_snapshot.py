"""Repository of score history (``apac_tenant_score_snapshots``)."""

from __future__ import annotations

from morpheus_pipelines.models import TenantScoreSnapshot
from morpheus_pipelines.repositories.bulk import SetBasedRepository


class TenantScoreSnapshotRepository(SetBasedRepository[TenantScoreSnapshot]):
    model_class = TenantScoreSnapshot
