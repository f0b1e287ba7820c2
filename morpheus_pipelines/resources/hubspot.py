"""HubSpot as a Dagster resource (settings: README, "Configuration")."""

from __future__ import annotations

import logging

import dagster as dg
from pydantic import Field

from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from morpheus_pipelines.platform.settings import DEFAULT_TARGET_LIST_ID, DEFAULTS


class TargetListResource(dg.ConfigurableResource):
    """Which HubSpot list is the target-account list (`HUBSPOT_TARGET_LIST_ID`). Carries no
    credential: the assets that only read the local snapshot get this, never the token
    (docs/observability.md, "Secrets")."""

    list_id: str = DEFAULT_TARGET_LIST_ID


class HubSpotResource(dg.ConfigurableResource):
    """HubSpot CRM API: private-app token, timeouts, retries, rate budget. Given only to the
    asset that calls HubSpot (`hubspot_target_accounts`)."""

    base_url: str = DEFAULTS["HUBSPOT_BASE_URL"]
    private_app_token: str = Field(default="", repr=False)
    request_timeout: float = float(DEFAULTS["HUBSPOT_REQUEST_TIMEOUT"])
    connect_timeout: float = 5.0
    retry_count: int = int(DEFAULTS["HUBSPOT_RETRY_COUNT"])
    requests_per_10s: int = int(DEFAULTS["HUBSPOT_REQUESTS_PER_10S"])
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
