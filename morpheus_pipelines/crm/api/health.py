"""``GET /healthz`` (200 when the database answers, else the 503 of any request) and
``GET /openapi.json`` (:mod:`.openapi`); neither needs an API key."""

from __future__ import annotations

from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import intake_of
from morpheus_pipelines.crm.api.openapi import openapi_document


async def healthz(request: Request) -> Response:
    await intake_of(request).in_transaction(lambda session: session.execute(text("SELECT 1")))
    return JSONResponse({"status": "ok"})


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


ROUTES = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
]
