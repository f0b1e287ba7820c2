"""Repositories of the two mutually exclusive tenant buckets (002 §4.3, §8)."""

from __future__ import annotations

from morpheus_pipelines.models import ActiveTenant, SalesOwnedTenant
from morpheus_pipelines.repositories.bulk import SetBasedRepository


class ActiveTenantRepository(SetBasedRepository[ActiveTenant]):
    model_class = ActiveTenant


class SalesOwnedTenantRepository(SetBasedRepository[SalesOwnedTenant]):
    model_class = SalesOwnedTenant
