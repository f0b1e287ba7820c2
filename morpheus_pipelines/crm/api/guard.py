"""The outermost layer of every intake request (docs/security.md, "Errors and logs").

* a request id: the caller's ``X-Request-Id`` when it is a short token, else a new one,
  answered in ``X-Request-Id`` and written on every event line logged while the request is
  handled (bound with :func:`~.events.event_fields`, so a line logged on a worker thread,
  deep in a repository, carries it too);
* under ``/v1/``, the ``RateLimit-Policy`` and ``RateLimit`` fields on every answer, the
  500 included (:func:`.budget.rate_limit_headers`): what each budget counting the request
  said of it, or, when none did (an unknown path), the address's budget of failed
  authentications as it stands;
* one JSON access line per request: method, path, status, milliseconds, request id. No
  bodies, no headers, no query strings: nothing that could carry an email, a phone number or
  a key;
* an exception no handler answered becomes a problem+json ``500`` with the request id and one ERROR
  line naming only the exception's type; where it was raised goes to a DEBUG line, without
  messages or values (:func:`~.redaction.redacted_traceback`).
  Nothing is re-raised, so the server never logs a traceback of its own: SQLAlchemy's
  message would carry the statement's parameters, the lead's contact among them;
* a client that hangs up before its request is read is logged as such (status ``499``, as
  nginx writes it), not as a failure of the service.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any

from starlette.requests import ClientDisconnect

from morpheus_pipelines.crm.api.budget import noted_allowances, rate_limit_headers
from morpheus_pipelines.crm.api.problems import PROBLEM_JSON, problem
from morpheus_pipelines.platform.observability.events import event_fields, log_event
from morpheus_pipelines.platform.observability.redaction import redacted_traceback

REQUEST_ID_HEADER = "x-request-id"
CLIENT_CLOSED_REQUEST = 499
BUDGETED_PREFIX = "/v1/"
CALLER_REQUEST_ID = r"^[A-Za-z0-9._:-]{1,64}$"
_CALLER_REQUEST_ID = re.compile(CALLER_REQUEST_ID)


def request_id_of(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id":
            text = value.decode("latin-1")
            if _CALLER_REQUEST_ID.match(text):
                return text
            break
    return uuid.uuid4().hex


class RequestGuard:
    """ASGI middleware: request id, access line, unexpected errors and disconnects."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = request_id_of(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        response_started = False

        def log(status: int) -> None:
            log_event(
                "http_request",
                method=scope["method"],
                path=scope["path"],
                status=status,
                duration_ms=round((time.perf_counter() - started) * 1000, 2),
                request_id=request_id,
            )

        async def guarded_send(message: dict) -> None:
            nonlocal response_started
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        *message.get("headers", ()),
                        (REQUEST_ID_HEADER.encode(), request_id.encode()),
                        *_rate_limit_fields(scope),
                    ],
                }
                # Written before the client can see the answer, so the line is never
                # behind the response it describes.
                response_started = True
                log(message["status"])
            await send(message)

        try:
            with event_fields(request_id=request_id):
                await self.app(scope, receive, guarded_send)
        except ClientDisconnect:
            log_event("http_client_disconnected", path=scope["path"], request_id=request_id)
            if not response_started:
                log(CLIENT_CLOSED_REQUEST)
        except Exception as exc:
            log_event(
                "intake_unhandled_error",
                level=logging.ERROR,
                method=scope["method"],
                path=scope["path"],
                error=type(exc).__name__,
                request_id=request_id,
            )
            log_event(
                "intake_unhandled_error_trace",
                level=logging.DEBUG,
                request_id=request_id,
                trace=redacted_traceback(exc),
            )
            if not response_started:
                await _internal_error(guarded_send, request_id)


def _rate_limit_fields(scope: dict[str, Any]) -> list[tuple[bytes, bytes]]:
    if not scope["path"].startswith(BUDGETED_PREFIX):
        return []
    app = scope.get("app")
    intake = getattr(getattr(app, "state", None), "intake", None)
    if intake is None:
        return []
    allowances = noted_allowances(scope) or [intake.address_allowance(scope)]
    extra = tuple(a.policy for a in allowances if a.policy not in intake.policies)
    return rate_limit_headers((*intake.policies, *dict.fromkeys(extra)), allowances)


async def _internal_error(send: Any, request_id: str) -> None:
    body = json.dumps(
        problem(
            500,
            "internal_error",
            "a fault of the service; quote the request_id when asking",
            request_id=request_id,
        )
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 500,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
