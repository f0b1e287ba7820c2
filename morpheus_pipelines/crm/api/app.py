"""The intake API as an ASGI application (docs/leads.md).

Starlette for routing and uvicorn to serve it: both are already in the dependency set (the
Dagster webserver runs on them), add almost nothing per request, and leave the one
transaction per lead in plain, synchronous SQLAlchemy run on a worker thread.

Every ``/v1/`` request: the caller's budget of failed authentications checked (429), API key
checked (401), request budget taken (429), body read within its size and time and parsed
strictly (413, 408, 422), subscription checked (403, the same answer whether or not the data
exists), then one transaction. A database that does not answer is a 503 with nothing
written, and the service recovers by itself when it returns; a value the database refuses is
a 422, never "unavailable" (docs/security.md).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ValidationError
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.body import BodyRefused, parse_body
from morpheus_pipelines.crm.api.budget import RequestBudget, retry_after_header
from morpheus_pipelines.crm.api.directory import LiveDirectory, OwnerDirectory, RoutingListener
from morpheus_pipelines.crm.api.guard import RequestGuard
from morpheus_pipelines.crm.api.keys import KeyDirectory
from morpheus_pipelines.crm.api.leads import create_lead, lead_view
from morpheus_pipelines.crm.api.openapi import openapi_document
from morpheus_pipelines.crm.api.schemas import ActivityIn, LeadIn, MessageIn, field_errors
from morpheus_pipelines.crm.api.timeline import (
    Answer,
    queue_message,
    record_activity,
    timeline_page,
    window_view,
)
from morpheus_pipelines.crm.repositories.leads import IntakeApiKeyRepository
from morpheus_pipelines.crm.rules.lead_intake import InvalidContact
from morpheus_pipelines.crm.rules.timeline import InvalidActivity
from morpheus_pipelines.platform.observability.events import log_event

MAX_BODY_BYTES = 64 * 1024
DEFAULT_REQUESTS_PER_MINUTE = 6_000
DEFAULT_AUTH_FAILURES_PER_MINUTE = 30
MAX_IDEMPOTENCY_KEY_LENGTH = 200
DEFAULT_TIMELINE_PAGE = 50
MAX_TIMELINE_PAGE = 200
_keys = IntakeApiKeyRepository()
ModelT = TypeVar("ModelT", bound=BaseModel)


class _Refused(Exception):
    """An early answer (401, 403, 413, 429, 503...)."""

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(body.get("error"))
        self.response = JSONResponse(body, status_code=status, headers=headers)


@dataclass
class IntakeSettings:
    database_url: str
    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE
    auth_failures_per_minute: int = DEFAULT_AUTH_FAILURES_PER_MINUTE
    body_read_timeout: float = 15.0  # seconds for the whole body, once the head is read
    owner_cache: bool = True
    listen_url: str | None = None  # libpq URL for LISTEN; None = TTL only
    pool_size: int = 20
    # What "now" is for the WhatsApp window and the future-timestamp check: a test moves it.
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))


def create_app(settings: IntakeSettings) -> Starlette:
    engine = create_engine(
        settings.database_url,
        pool_size=settings.pool_size,
        max_overflow=settings.pool_size,
        pool_timeout=5,
        # A lead acknowledged must survive a crash: commits wait for the WAL flush even on a
        # server tuned for batch work (the embedded one runs with synchronous_commit=off).
        connect_args={"connect_timeout": 3, "options": "-c synchronous_commit=on"},
    )
    factory = sessionmaker(engine, expire_on_commit=False)

    def session_scope() -> Any:
        return factory.begin()

    directory = (
        OwnerDirectory(session_scope) if settings.owner_cache else LiveDirectory(session_scope)
    )
    budget = RequestBudget(settings.requests_per_minute)
    auth_failures = RequestBudget(settings.auth_failures_per_minute)
    listener = (
        RoutingListener(settings.listen_url, directory)
        if settings.listen_url and settings.owner_cache
        else None
    )

    def attempt(work: Callable[[Session], Any]) -> Any:
        # Not ``begin()``: the work may roll back (a duplicate delivery gives its owner
        # charge back) and go on reading in a new transaction.
        with factory() as session:
            result = work(session)
            session.commit()
            return result

    def run(work: Callable[[Session], Any]) -> Any:
        try:
            try:
                return attempt(work)
            except DBAPIError as exc:
                # A pooled connection the server dropped (a restart): the pool is
                # invalidated and the transaction, which did not commit, is tried once more on
                # a new connection. Cheaper than pinging every connection on every checkout.
                if not exc.connection_invalidated:
                    raise
                return attempt(work)
        except (DBAPIError, PoolTimeout) as exc:
            failure = database_failure(exc)
            if failure == "unavailable":
                log_event(
                    "intake_database_unavailable", level=logging.ERROR, error=type(exc).__name__
                )
                raise _unavailable() from None
            if failure == "value_refused":
                log_event(
                    "intake_value_refused_by_database",
                    level=logging.WARNING,
                    sqlstate=getattr(getattr(exc, "orig", None), "sqlstate", None),
                )
                raise _Refused(
                    422, _invalid("body", "the database cannot store a value of this request")
                ) from None
            raise

    async def in_transaction(work: Callable[[Session], Any]) -> Any:
        return await anyio.to_thread.run_sync(run, work)

    keys = KeyDirectory(lambda: run(_keys.active_keys))

    def reload_keys() -> None:
        with contextlib.suppress(_Refused):
            # A failed reload leaves the view of a moment ago to answer; the request's own
            # transaction meets the outage, if it lasts.
            keys.reload()
        if not keys.loaded:
            raise _unavailable()

    async def authorised(request: Request) -> tuple[uuid.UUID, uuid.UUID]:
        """``(key id, subscription id)`` of the caller, or a 401/429 refusal. A client
        address past its budget of failed authentications is refused before its key is
        looked at."""
        address = request.client.host if request.client else "unknown"
        wait = auth_failures.wait(address)
        if wait > 0:
            raise _Refused(
                429,
                {"error": "too_many_failed_authentications"},
                {"Retry-After": retry_after_header(wait)},
            )
        header = request.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            auth_failures.take(address)
            raise _Refused(401, {"error": "missing_api_key"}, {"WWW-Authenticate": "Bearer"})
        if keys.due():
            await anyio.to_thread.run_sync(reload_keys)
        found = keys.verify(presented.strip())
        if found is None:
            auth_failures.take(address)
            raise _Refused(401, {"error": "invalid_api_key"}, {"WWW-Authenticate": "Bearer"})
        key_id, subscription_id = found
        wait = budget.take(key_id.hex)
        if wait > 0:
            raise _Refused(
                429, {"error": "rate_limited"}, {"Retry-After": retry_after_header(wait)}
            )
        return key_id, subscription_id

    async def read_json(request: Request) -> Any:
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise _Refused(413, _TOO_LARGE, _CLOSE)
        chunks, size = [], 0
        with anyio.move_on_after(settings.body_read_timeout) as deadline:
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise _Refused(413, _TOO_LARGE, _CLOSE)
                chunks.append(chunk)
        if deadline.cancelled_caught:
            raise _Refused(
                408,
                {"error": "request_timeout", "message": "the body did not arrive in time"},
                _CLOSE,
            )
        try:
            return parse_body(b"".join(chunks))
        except BodyRefused as exc:
            raise _Refused(422, _invalid(exc.field, str(exc))) from None

    def parsed(model: type[ModelT], raw: Any) -> ModelT:
        if not isinstance(raw, dict):
            raise _Refused(422, _invalid("body", "expected a JSON object"))
        try:
            return model.model_validate(raw, strict=False)
        except ValidationError as exc:
            raise _Refused(422, {"error": "invalid_request", "fields": field_errors(exc)}) from None

    async def post_lead(request: Request) -> Response:
        _, subscription_id = await authorised(request)
        idempotency_header = _idempotency_key(request)
        raw = await read_json(request)
        lead = parsed(LeadIn, raw)
        if lead.subscription_id != subscription_id:
            return _forbidden()
        now = settings.clock()
        answer = await in_transaction(
            lambda session: create_lead(
                session,
                directory,
                lead,
                raw,
                idempotency_header=idempotency_header,
                now=now,
            )
        )
        headers = {"Idempotent-Replayed": "true"} if answer.replayed else None
        return JSONResponse(answer.body, status_code=answer.status, headers=headers)

    async def post_activity(request: Request) -> Response:
        _, subscription_id = await authorised(request)
        raw = await read_json(request)
        activity = parsed(ActivityIn, raw)
        if activity.subscription_id != subscription_id:
            return _forbidden()
        now = settings.clock()
        return _answer(
            await in_transaction(
                lambda session: record_activity(session, activity, raw, subscription_id, now)
            )
        )

    def lead_id_of(request: Request) -> uuid.UUID:
        try:
            return uuid.UUID(request.path_params["lead_id"])
        except ValueError:
            raise _Refused(403, _FORBIDDEN) from None  # as another subscription's lead

    async def get_timeline(request: Request) -> Response:
        _, subscription_id = await authorised(request)
        lead_id = lead_id_of(request)
        limit_text = request.query_params.get("limit", str(DEFAULT_TIMELINE_PAGE))
        if not (
            limit_text.isascii()
            and limit_text.isdigit()
            and 1 <= int(limit_text) <= MAX_TIMELINE_PAGE
        ):
            raise _Refused(
                422, _invalid("limit", f"limit must be an integer from 1 to {MAX_TIMELINE_PAGE}")
            )
        cursor = request.query_params.get("cursor") or None
        return _answer(
            await in_transaction(
                lambda session: timeline_page(
                    session, lead_id, subscription_id, limit=int(limit_text), cursor=cursor
                )
            )
        )

    async def get_whatsapp_window(request: Request) -> Response:
        _, subscription_id = await authorised(request)
        lead_id = lead_id_of(request)
        now = settings.clock()
        return _answer(
            await in_transaction(
                lambda session: window_view(session, lead_id, subscription_id, now)
            )
        )

    async def post_message(request: Request) -> Response:
        _, subscription_id = await authorised(request)
        key = _idempotency_key(request)
        raw = await read_json(request)
        message = parsed(MessageIn, raw)
        now = settings.clock()
        answer = await in_transaction(
            lambda session: queue_message(
                session, message, raw, subscription_id, now, idempotency_key=key
            )
        )
        if answer.status == 422 and answer.body["error"] == "whatsapp_window_closed":
            log_event(
                "whatsapp_free_form_refused",
                level=logging.WARNING,
                lead_id=str(message.lead_id),
                closed_at=answer.body["closed_at"],
            )
        return _answer(answer)

    async def get_lead(request: Request) -> Response:
        _, subscription_id = await authorised(request)
        lead_id = lead_id_of(request)
        found = await in_transaction(lambda session: lead_view(session, lead_id))
        if found is None or found[0] != subscription_id:
            return _forbidden()
        return JSONResponse(found[1])

    async def healthz(request: Request) -> Response:
        await in_transaction(lambda session: session.execute(text("SELECT 1")))
        return JSONResponse({"status": "ok"})

    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if listener is not None:
            listener.start()
        try:
            yield
        finally:
            if listener is not None:
                listener.stop()
            engine.dispose()

    app = Starlette(
        routes=[
            Route("/v1/leads", post_lead, methods=["POST"]),
            Route("/v1/leads/{lead_id}", get_lead, methods=["GET"]),
            Route("/v1/leads/{lead_id}/timeline", get_timeline, methods=["GET"]),
            Route("/v1/leads/{lead_id}/whatsapp-window", get_whatsapp_window, methods=["GET"]),
            Route("/v1/activities", post_activity, methods=["POST"]),
            Route("/v1/messages", post_message, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/openapi.json", openapi, methods=["GET"]),
        ],
        exception_handlers={
            _Refused: lambda request, exc: exc.response,
            # Raised inside the transaction, which therefore wrote nothing.
            InvalidContact: _invalid_field,
            InvalidActivity: _invalid_field,
        },
        lifespan=lifespan,
    )
    app.add_middleware(RequestGuard)
    app.state.directory = directory
    app.state.keys = keys
    app.state.listener = listener
    app.state.engine = engine
    return app


_FORBIDDEN = {"error": "forbidden", "message": "no such lead for this API key"}
_TOO_LARGE = {"error": "body_too_large", "limit_bytes": MAX_BODY_BYTES}
# The rest of a body not read is not worth the connection: the client starts afresh.
_CLOSE = {"Connection": "close"}


def _forbidden() -> Response:
    return JSONResponse(_FORBIDDEN, status_code=403)


def _unavailable() -> _Refused:
    """The 503 a sender retries: nothing was written."""
    return _Refused(503, {"error": "database_unavailable"}, {"Retry-After": "1"})


def _idempotency_key(request: Request) -> str | None:
    """The ``Idempotency-Key`` header: absent, or 1 to 200 characters (a longer one could not
    be indexed, and no sender needs one)."""
    key = request.headers.get("idempotency-key")
    if key is not None and not 1 <= len(key.strip()) <= MAX_IDEMPOTENCY_KEY_LENGTH:
        raise _Refused(
            422, _invalid("Idempotency-Key", f"1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
        )
    return key


# SQLSTATEs of a server that is going away or cannot take a connection now, beside class 08
# (connection exceptions): an outage, worth retrying.
_UNAVAILABLE_STATES = frozenset({"53000", "53300", "57P01", "57P02", "57P03"})


def database_failure(exc: Exception) -> str:
    """``unavailable`` (a 503 the sender retries), ``value_refused`` (a value of the request
    the database will not store: data exceptions, class 22, and program limits, class 54),
    or ``error`` (a fault of the service: a 500)."""
    if isinstance(exc, PoolTimeout):
        return "unavailable"  # every connection busy for the pool's timeout
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return "unavailable"
    state = getattr(getattr(exc, "orig", None), "sqlstate", None)
    if state is None:
        # No answer from a server at all (refused, timed out, reset): only a connection
        # failure is raised without one.
        return "unavailable" if isinstance(exc, OperationalError) else "error"
    if state.startswith("08") or state in _UNAVAILABLE_STATES:
        return "unavailable"
    if state.startswith(("22", "54")):
        return "value_refused"
    return "error"


def _invalid(field_name: str, message: str) -> dict[str, Any]:
    return {"error": "invalid_request", "fields": [{"field": field_name, "message": message}]}


def _invalid_field(request: Request, exc: Exception) -> Response:
    return JSONResponse(_invalid(getattr(exc, "field", "body"), str(exc)), status_code=422)


def _answer(answer: Answer) -> Response:
    return JSONResponse(answer.body, status_code=answer.status, headers=answer.headers)
