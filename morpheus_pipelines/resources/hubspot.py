"""HubSpot as a Dagster resource (settings from DESIGN §2)."""

from __future__ import annotations

import logging

import dagster as dg
from pydantic import Field

from morpheus_pipelines.clients.hubspot import HubSpotClient


class HubSpotResource(dg.ConfigurableResource):
    """HubSpot CRM API: private-app token, target list, timeouts, retries, rate budget."""

    base_url: str = "https://api.hubapi.com"
    private_app_token: str = Field(default="", repr=False)
    target_list_id: str = "19544"
    request_timeout: float = 30.0
    connect_timeout: float = 5.0
    retry_count: int = 3
    requests_per_10s: int = 100
    max_backoff_seconds: float = 30.0

    def get_client(self, logger: logging.Logger | None = None) -> HubSpotClient:
        return HubSpotClient(
            self.base_url,
            self.private_app_token,
            read_timeout=self.request_timeout,
            connect_timeout=self.connect_timeout,
            retry_count=self.retry_count,
            requests_per_10s=self.requests_per_10s,
            logger=logger,
            max_backoff=self.max_backoff_seconds,
        )
