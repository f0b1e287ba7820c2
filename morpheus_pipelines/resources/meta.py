"""Meta's Graph API as a Dagster resource (README, "Configuration"): what reads Lead Ads
leads' answers."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from morpheus_pipelines.platform.clients.meta_graph import (
    DEFAULT_API_VERSION,
    DEFAULT_BASE_URL,
    MetaGraphClient,
)


class MetaGraphResource(dg.ConfigurableResource):
    """The Graph API with a system user's access token. An empty token means Meta is not
    configured: Lead Ads leads keep their owner and wait for their answers."""

    base_url: str = Field(default=DEFAULT_BASE_URL, description="META_GRAPH_BASE_URL")
    api_version: str = Field(default=DEFAULT_API_VERSION, description="META_GRAPH_API_VERSION")
    access_token: str = Field(default="", description="META_ACCESS_TOKEN (secret)")
    timeout: float = Field(default=10.0, description="Seconds per request.")

    def get_client(self) -> MetaGraphClient | None:
        if not self.access_token:
            return None
        return MetaGraphClient(self.base_url, self.access_token, self.api_version, self.timeout)
