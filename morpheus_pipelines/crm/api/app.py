"""The intake API as an ASGI application (docs/leads.md).

Starlette for routing and uvicorn to serve it: both are already in the dependency set (the
Dagster webserver runs on them), add almost nothing per request, and leave the one
transaction per lead in plain, synchronous SQLAlchemy run on a worker thread.

One module per resource holds its endpoints and their work (:mod:`.leads`,
:mod:`.activities`, :mod:`.messages`, :mod:`.timeline`, :mod:`.webhooks`, :mod:`.health`);
what every request goes through, from the API key to the transaction, is
:mod:`.dependencies`, shared through ``app.state.intake``; the outermost layer (request id,
access line, ``RateLimit`` fields, unexpected errors) is :mod:`.guard`. Every error answer,
Starlette's own 404 and 405 included, is an RFC 9457 problem (:mod:`.problems`).

A new resource is a module with its ``ROUTES`` added to :data:`RESOURCES` and its operations
added to :mod:`.openapi`; the guard, the problems and the reference page at ``/docs`` cover
it from there.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException

from morpheus_pipelines.crm.api import (
    activities,
    floor,
    google_ads,
    health,
    leads,
    messages,
    meta,
    timeline,
    webhooks,
)
from morpheus_pipelines.crm.api.cors import BrowserForms
from morpheus_pipelines.crm.api.dependencies import Intake, Refused, invalid_field, refusal
from morpheus_pipelines.crm.api.guard import RequestGuard
from morpheus_pipelines.crm.api.problems import http_exception
from morpheus_pipelines.crm.api.settings import IntakeSettings
from morpheus_pipelines.crm.rules.lead_intake import InvalidContact
from morpheus_pipelines.crm.rules.timeline import InvalidActivity

RESOURCES = (leads, timeline, activities, messages, webhooks, meta, google_ads, health)


def create_app(settings: IntakeSettings) -> Starlette:
    intake = Intake(settings)
    app = Starlette(
        routes=[
            *(route for resource in RESOURCES for route in resource.ROUTES),
            # The benchmark's floor: not a resource of the API, mounted only when asked for.
            *(floor.ROUTES if settings.benchmark_floor else ()),
        ],
        exception_handlers={
            HTTPException: http_exception,  # Starlette's 404 and 405
            Refused: refusal,
            # Raised inside the transaction, which therefore wrote nothing.
            InvalidContact: invalid_field,
            InvalidActivity: invalid_field,
        },
        lifespan=intake.lifespan,
    )
    # Starlette wraps the last added outermost: the guard sees every answer, CORS included.
    app.add_middleware(BrowserForms)
    app.add_middleware(RequestGuard)
    app.state.intake = intake
    # What the tests and the demo look at: the owner cache, the keys, the listener, the pool.
    app.state.directory = intake.directory
    app.state.keys = intake.keys
    app.state.listener = intake.listener
    app.state.engine = intake.engine
    return app
