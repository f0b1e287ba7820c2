"""Repository of per-partition enrichment results."""

from __future__ import annotations

from morpheus_pipelines.models import EnrichedTenant
from morpheus_pipelines.repositories.bulk import SetBasedRepository


class EnrichedTenantRepository(SetBasedRepository[EnrichedTenant]):
    model_class = EnrichedTenant
