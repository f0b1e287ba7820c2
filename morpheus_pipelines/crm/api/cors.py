"""Browser forms (docs/leads.md, "Browser forms"): CORS for ``POST /v1/leads`` from the origins
of publishable keys, and for nothing else.

A browser asks first (``OPTIONS /v1/leads`` with ``Origin`` and
``Access-Control-Request-Method: POST``); the preflight carries no key, so it is answered by
the origin alone: ``204`` with the CORS headers when some active publishable key names that
origin, else ``403`` without them, which the browser reports as a CORS failure and so never
sends the lead. The ``POST`` itself is answered with ``Access-Control-Allow-Origin`` for such
an origin; whether the key presented may be used from it is the key check's to decide
(:meth:`~morpheus_pipelines.crm.api.dependencies.Intake.authorised`). Every other path has no
CORS at all: a publishable key can do nothing else, and secret keys are for servers.
"""

from __future__ import annotations

import json
from typing import Any

from morpheus_pipelines.platform.text.origins import origin_header

LEADS_PATH = "/v1/leads"
ALLOWED_HEADERS = "Authorization, Content-Type, Idempotency-Key, X-Request-Id"
EXPOSED_HEADERS = "Location, X-Request-Id, Retry-After, RateLimit, RateLimit-Policy"
PREFLIGHT_MAX_AGE = "600"  # seconds a browser may reuse the answer


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


class BrowserForms:
    """ASGI middleware: the preflight of ``/v1/leads`` and the CORS headers of its answer."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != LEADS_PATH:
            await self.app(scope, receive, send)
            return
        origin = origin_header(_header(scope, b"origin"))
        if origin is None:
            await self.app(scope, receive, send)
            return
        served = await scope["app"].state.intake.serves_origin(origin)
        if scope["method"] == "OPTIONS":
            wanted = (_header(scope, b"access-control-request-method") or "").upper()
            await self._preflight(send, origin if served and wanted == "POST" else None)
            return
        if not served:
            await self.app(scope, receive, send)
            return

        async def with_cors(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    (b"access-control-allow-origin", origin.encode()),
                    (b"access-control-expose-headers", EXPOSED_HEADERS.encode()),
                    (b"vary", b"Origin"),
                ]
            await send(message)

        await self.app(scope, receive, with_cors)

    @staticmethod
    async def _preflight(send: Any, origin: str | None) -> None:
        if origin is None:
            body = json.dumps(
                {
                    "type": "about:blank",
                    "title": "Forbidden",
                    "status": 403,
                    "detail": "no publishable key may be used from this origin",
                    "error": "origin_not_allowed",
                }
            ).encode()
            headers = [
                (b"content-type", b"application/problem+json"),
                (b"content-length", str(len(body)).encode()),
                (b"vary", b"Origin"),
            ]
            await send({"type": "http.response.start", "status": 403, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        headers = [
            (b"access-control-allow-origin", origin.encode()),
            (b"access-control-allow-methods", b"POST"),
            (b"access-control-allow-headers", ALLOWED_HEADERS.encode()),
            (b"access-control-max-age", PREFLIGHT_MAX_AGE.encode()),
            (b"vary", b"Origin"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
