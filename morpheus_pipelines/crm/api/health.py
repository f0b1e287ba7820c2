"""``GET /healthz`` (200 when the database answers, else the 503 of any request),
``GET /openapi.json`` (:mod:`.openapi`) and ``GET /docs``, the same document as a page
(:mod:`.reference`); none needs an API key."""

from __future__ import annotations

from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import intake_of
from morpheus_pipelines.crm.api.openapi import openapi_document
from morpheus_pipelines.crm.api.reference import reference_page


async def healthz(request: Request) -> Response:
    # One round trip in autocommit: inside a transaction it was three (BEGIN, SELECT 1,
    # COMMIT), each waiting its turn for a core on a loaded machine (docs/decisions/0052).
    await intake_of(request).in_autocommit(lambda session: session.execute(text("SELECT 1")))
    return JSONResponse({"status": "ok"})


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


async def docs(request: Request) -> Response:
    return HTMLResponse(reference_page())


ROUTES = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/docs", docs, methods=["GET"]),
]
