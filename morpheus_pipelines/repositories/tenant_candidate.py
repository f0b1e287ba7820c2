"""Repository of the per-partition tenant candidates."""

from __future__ import annotations

from morpheus_pipelines.models import TenantCandidate
from morpheus_pipelines.repositories.bulk import SetBasedRepository


class TenantCandidateRepository(SetBasedRepository[TenantCandidate]):
    model_class = TenantCandidate
