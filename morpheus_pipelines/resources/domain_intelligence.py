"""The Domain Intelligence service as a Dagster resource (README, "Configuration")."""

from __future__ import annotations

import logging

import dagster as dg
from pydantic import Field

from morpheus_pipelines.platform.clients.domain_intelligence import DomainIntelligenceClient


class DomainIntelligenceResource(dg.ConfigurableResource):
    """Domain Intelligence service (company facts per tenant). An empty base URL means the
    service is not configured: enrichment then records every tenant as "unavailable" and routing
    continues without waiting for it."""

    base_url: str = Field(
        default="",
        description="Service root (DOMAIN_INTELLIGENCE_BASE_URL); empty = not configured.",
    )
    read_timeout: float = Field(default=10.0, description="Read timeout per request, seconds.")
    connect_timeout: float = Field(default=3.0, description="Connect timeout, seconds.")
    retry_count: int = Field(
        default=3, description="Bounded retries for 429, 5xx, timeouts and connection errors."
    )
    requests_per_10s: int = Field(
        default=5_000,
        description="Client-side rate budget (our own service: high by default; lower it to "
        "protect a shared deployment).",
    )
    max_age_days: int = Field(
        default=30,
        ge=0,
        description="Reuse an answer for unchanged inputs while it is younger than this "
        "(DOMAIN_INTELLIGENCE_MAX_AGE_DAYS); 0 = ask for every tenant every run.",
    )
    max_backoff_seconds: float = Field(
        default=30.0,
        description="Longest wait between attempts; a longer Retry-After fails the batch.",
    )

    @property
    def configured(self) -> bool:
        """True when a base URL is set."""
        return bool(self.base_url.strip())

    def get_client(self, logger: logging.Logger | None = None) -> DomainIntelligenceClient | None:
        """A client for the configured service, or ``None`` when ``base_url`` is empty."""
        if not self.configured:
            return None
        return DomainIntelligenceClient(
            self.base_url,
            read_timeout=self.read_timeout,
            connect_timeout=self.connect_timeout,
            retry_count=self.retry_count,
            requests_per_10s=self.requests_per_10s,
            max_backoff=self.max_backoff_seconds,
            logger=logger,
        )
