"""Settings every tenant asset shares, as a Dagster resource."""

import dagster as dg
from pydantic import Field


class PipelineSettingsResource(dg.ConfigurableResource):
    """How the tenant assets (enrichment, routing, scoring) cut a partition into chunks."""

    chunk_size: int = Field(
        default=100_000,
        gt=0,
        description="Tenants per chunk: one keyset read, one transaction, bounded memory.",
    )
