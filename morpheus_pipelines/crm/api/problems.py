"""Every error answer of the intake API as an RFC 9457 problem (docs/leads.md, "Errors").

``application/problem+json`` with ``type``, ``title``, ``status`` and, when there is more to
say, ``detail``; beside them, as extension members, what the API answered before problems
existed and clients match on: ``error`` (a stable code, ``"rate_limited"``,
``"idempotency_key_reused"``...), ``fields`` (the fields a 422 refuses), and whatever the
refusal adds (``closed_at``, ``limit_bytes``, ``request_id``...).

:func:`problem` builds every such body, whoever answers: a handler's
:class:`~.dependencies.Refused` or :class:`~.dependencies.Answer`, Starlette's own 404 and 405
(:func:`http_exception`), the guard's 500, and the server's 400/408/431/503 written below the
application (:func:`problem_bytes`). A new error code needs a title in :data:`TITLES`; its
``type`` is then the anchor of its entry in the API reference (``GET /docs``).
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match

PROBLEM_JSON = "application/problem+json"
# The draft RateLimit fields' problem type for a spent quota (draft-ietf-httpapi-ratelimit-
# headers, "Quota Exceeded"); it names the spent policies in ``violated-policies``.
QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded"

# One title per error code: what the problem is, the same for every occurrence (RFC 9457
# §3.1.3); what is particular to one answer goes to ``detail``.
TITLES: dict[str, str] = {
    "invalid_request": "The request has invalid fields",
    "idempotency_key_required": "An Idempotency-Key header is required",
    "idempotency_key_reused": "The idempotency key was used for a different request",
    "external_id_reused": "The external_id was recorded with a different body",
    "whatsapp_window_closed": "The WhatsApp window is closed",
    "opted_out": "The address has opted out",
    "missing_api_key": "No API key",
    "invalid_api_key": "The API key is not valid",
    "forbidden": "Not this key's data",
    "not_found": "No such resource",
    "method_not_allowed": "Method not allowed on this resource",
    "rate_limited": "The key's request budget is spent",
    "too_many_failed_authentications": "Too many failed authentications from this address",
    "body_too_large": "The body is too large",
    "request_timeout": "The request did not arrive in time",
    "request_head_too_large": "The request head is too large",
    "bad_request": "The request is not valid HTTP",
    "database_unavailable": "The database does not answer",
    "server_busy": "The server is at its connection limit",
    "internal_error": "A fault of the service",
    "webhook_secret_not_configured": "Webhook deliveries are not configured",
    "missing_signature": "The delivery is not signed",
    "invalid_signature": "The delivery's signature does not match",
    "stale_timestamp": "The delivery's timestamp is too old",
    "timestamp_in_the_future": "The delivery's timestamp is ahead of the service's clock",
    "invalid_timestamp": "The delivery's timestamp is not valid",
    "meta_webhooks_not_configured": "Meta's webhooks are not configured",
    "verification_refused": "The webhook verification is refused",
    "unknown_google_key": "No subscription has this Google Ads key",
    "origin_not_allowed": "No publishable key may be used from this origin",
    "publishable_key_cannot": "A publishable key may only create leads",
}


def problem_type(error: str) -> str:
    """The ``type`` of an error code: its entry in the API reference (a relative reference,
    resolved against the answer's URL, so it names this deployment's own ``/docs``)."""
    return f"/docs#problem-{error}"


def problem(
    status: int,
    error: str,
    detail: str | None = None,
    *,
    type_: str | None = None,
    **extensions: Any,
) -> dict[str, Any]:
    """The problem body of an error answer; ``extensions`` are added as they are."""
    body: dict[str, Any] = {
        "type": type_ or problem_type(error),
        "title": TITLES.get(error) or HTTPStatus(status).phrase,
        "status": status,
    }
    if detail:
        body["detail"] = detail
    body["error"] = error
    body.update(extensions)
    return body


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_JSON


def problem_response(body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    """The answer of a body :func:`problem` built (its status is the body's)."""
    return ProblemResponse(body, status_code=body["status"], headers=headers)


def problem_bytes(status: int, error: str, detail: str | None = None) -> bytes:
    """The same body, encoded, for an answer written below the application."""
    return json.dumps(problem(status, error, detail), separators=(",", ":")).encode()


def http_exception(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route: 404; a method the route does not take: 405
    with ``Allow`` naming every method any route of the path takes) as problems."""
    assert isinstance(exc, HTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 404:
        return problem_response(problem(404, "not_found", "no such path in this API"), headers)
    if exc.status_code == 405:
        allowed = allowed_methods(request)
        headers["Allow"] = ", ".join(allowed)
        return problem_response(
            problem(
                405,
                "method_not_allowed",
                f"{request.method} is not a method of this path; it takes {', '.join(allowed)}",
            ),
            headers,
        )
    return problem_response(
        problem(exc.status_code, HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_")),
        headers,
    )


def allowed_methods(request: Request) -> list[str]:
    """Every method the application's routes take on the request's path (Starlette puts one
    route's methods in ``Allow``; a path served by several routes needs all of theirs)."""
    methods: set[str] = set()
    for route in request.app.routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)
