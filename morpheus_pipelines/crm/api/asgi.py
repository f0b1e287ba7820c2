"""The application each ``morpheus serve`` worker process builds from the environment
(uvicorn imports it by name when it runs several workers)."""

from __future__ import annotations

import os

from starlette.applications import Starlette

from morpheus_pipelines.crm.api.app import create_app
from morpheus_pipelines.crm.api.settings import IntakeSettings
from morpheus_pipelines.db.urls import libpq_url, warehouse_url
from morpheus_pipelines.platform.heap import freeze_heap
from morpheus_pipelines.platform.settings import Settings, load_settings

OWNER_CACHE_VARIABLE = "MORPHEUS_INTAKE_OWNER_CACHE"


def app_from_environment() -> Starlette:
    settings = load_settings()
    app = _app(settings)
    # The worker's startup heap (modules, mappers, pydantic models) out of the collector's
    # sight: a full collection walking it stopped the event loop, and every request in it,
    # often enough to be the intake's p99 (docs/decisions/0052).
    freeze_heap()
    return app


def _app(settings: Settings) -> Starlette:
    url = warehouse_url(settings, start_embedded=False)
    return create_app(
        IntakeSettings(
            database_url=url,
            # Each key's budget is one row in the database, shared by every worker and host;
            # the budget of failed authentications is each process's own (crm/api/budget.py).
            requests_per_minute=settings.intake_requests_per_minute,
            auth_failures_per_minute=settings.intake_auth_failures_per_minute,
            origin_requests_per_minute=settings.intake_origin_requests_per_minute,
            owner_cache=os.environ.get(OWNER_CACHE_VARIABLE, "1") == "1",
            listen_url=libpq_url(url),
            hubspot_client_secret=settings.hubspot_client_secret.get_secret_value(),
            meta_app_secret=settings.meta_app_secret.get_secret_value(),
            meta_verify_token=settings.meta_verify_token.get_secret_value(),
            public_url=settings.public_url or None,
            benchmark_floor=settings.intake_benchmark_floor,
        )
    )
