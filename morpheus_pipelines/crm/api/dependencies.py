"""What every intake request goes through around its own work (docs/security.md).

In the order a ``/v1/`` handler calls them: the client address's budget of failed
authentications (429), the API key (401) and the key's request budget (429), in
:meth:`Intake.authorised`; the ``Idempotency-Key`` header (422); the body, read within its
size and time and parsed strictly (413, 408, 422); then one transaction
(:meth:`Intake.in_transaction`). A database that does not answer is a 503 with nothing
written, and the service recovers by itself when it returns; a value the database refuses is
a 422, never "unavailable".

A check refuses by raising :class:`Refused`; the application answers it as it stands.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import anyio
from pydantic import BaseModel, ValidationError
from sqlalchemy import create_engine
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from morpheus_pipelines.crm.api.body import BodyRefused, parse_body
from morpheus_pipelines.crm.api.budget import RequestBudget, retry_after_header
from morpheus_pipelines.crm.api.directory import LiveDirectory, OwnerDirectory, RoutingListener
from morpheus_pipelines.crm.api.keys import KeyDirectory
from morpheus_pipelines.crm.api.schemas import field_errors
from morpheus_pipelines.crm.api.settings import IntakeSettings
from morpheus_pipelines.crm.repositories.intake_keys import IntakeApiKeyRepository
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.redaction import register_secret

MAX_BODY_BYTES = 64 * 1024
MAX_IDEMPOTENCY_KEY_LENGTH = 200
_keys = IntakeApiKeyRepository()
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class Answer:
    """What a handler's transaction answers: status, JSON body and any extra headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] | None = None


# Another subscription's lead and no lead at all get the same answer, so ids cannot be probed.
FORBIDDEN = Answer(403, {"error": "forbidden", "message": "no such lead for this API key"})
_TOO_LARGE = {"error": "body_too_large", "limit_bytes": MAX_BODY_BYTES}
# The rest of a body not read is not worth the connection: the client starts afresh.
_CLOSE = {"Connection": "close"}


def respond(answer: Answer) -> Response:
    return JSONResponse(answer.body, status_code=answer.status, headers=answer.headers)


class Refused(Exception):
    """An early answer (401, 403, 413, 429, 503...)."""

    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(body.get("error"))
        self.response = JSONResponse(body, status_code=status, headers=headers)


def unavailable() -> Refused:
    """The 503 a sender retries: nothing was written."""
    return Refused(503, {"error": "database_unavailable"}, {"Retry-After": "1"})


def invalid(field_name: str, message: str) -> dict[str, Any]:
    return {"error": "invalid_request", "fields": [{"field": field_name, "message": message}]}


class Intake:
    """One application's database, key directory, owner directory and budgets, and the checks
    its requests go through (the handlers find it as ``request.app.state.intake``)."""

    def __init__(self, settings: IntakeSettings) -> None:
        self.settings = settings
        for secret in (
            settings.hubspot_client_secret,
            settings.meta_app_secret,
            settings.meta_verify_token,
        ):
            register_secret(secret)
        self.engine = create_engine(
            settings.database_url,
            pool_size=settings.pool_size,
            max_overflow=settings.pool_size,
            pool_timeout=5,
            # A lead acknowledged must survive a crash: commits wait for the WAL flush even on
            # a server tuned for batch work (the embedded one runs with synchronous_commit=off).
            connect_args={"connect_timeout": 3, "options": "-c synchronous_commit=on"},
        )
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.directory = (OwnerDirectory if settings.owner_cache else LiveDirectory)(
            self._sessions.begin
        )
        self.listener = (
            RoutingListener(settings.listen_url, self.directory)
            if settings.listen_url and settings.owner_cache
            else None
        )
        self.keys = KeyDirectory(lambda: self.run(_keys.active_keys))
        self._budget = RequestBudget(settings.requests_per_minute)
        self._auth_failures = RequestBudget(settings.auth_failures_per_minute)

    def now(self) -> datetime:
        return self.settings.clock()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        if self.listener is not None:
            self.listener.start()
        try:
            yield
        finally:
            if self.listener is not None:
                self.listener.stop()
            self.engine.dispose()

    # -- the transaction ---------------------------------------------------------------------

    async def in_transaction(self, work: Callable[[Session], Any]) -> Any:
        """``work`` in one transaction on a worker thread, committed; see :meth:`run`."""
        return await anyio.to_thread.run_sync(self.run, work)

    def run(self, work: Callable[[Session], Any]) -> Any:
        """``work``'s result, or the 503 (an outage) or 422 (a value the database will not
        store) :class:`Refused`; any other database error is a fault of the service."""
        try:
            try:
                return self._attempt(work)
            except DBAPIError as exc:
                # A pooled connection the server dropped (a restart): the pool is
                # invalidated and the transaction, which did not commit, is tried once more on
                # a new connection. Cheaper than pinging every connection on every checkout.
                if not exc.connection_invalidated:
                    raise
                return self._attempt(work)
        except (DBAPIError, PoolTimeout) as exc:
            failure = database_failure(exc)
            if failure == "unavailable":
                log_event(
                    "intake_database_unavailable", level=logging.ERROR, error=type(exc).__name__
                )
                raise unavailable() from None
            if failure == "value_refused":
                log_event(
                    "intake_value_refused_by_database",
                    level=logging.WARNING,
                    sqlstate=getattr(getattr(exc, "orig", None), "sqlstate", None),
                )
                raise Refused(
                    422, invalid("body", "the database cannot store a value of this request")
                ) from None
            raise

    def _attempt(self, work: Callable[[Session], Any]) -> Any:
        # Not ``begin()``: the work may roll back (a duplicate delivery gives its owner
        # charge back) and go on reading in a new transaction.
        with self._sessions() as session:
            result = work(session)
            session.commit()
            return result

    # -- the caller --------------------------------------------------------------------------

    async def authorised(self, request: Request) -> tuple[uuid.UUID, uuid.UUID]:
        """``(key id, subscription id)`` of the caller, or a 401/429 refusal. A client
        address past its budget of failed authentications is refused before its key is
        looked at; the key's request budget is taken once the key is known."""
        address = request.client.host if request.client else "unknown"
        wait = self._auth_failures.wait(address)
        if wait > 0:
            raise Refused(
                429,
                {"error": "too_many_failed_authentications"},
                {"Retry-After": retry_after_header(wait)},
            )
        header = request.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            self._auth_failures.take(address)
            raise Refused(401, {"error": "missing_api_key"}, {"WWW-Authenticate": "Bearer"})
        if self.keys.due():
            await anyio.to_thread.run_sync(self._reload_keys)
        found = self.keys.verify(presented.strip())
        if found is None:
            self._auth_failures.take(address)
            raise Refused(401, {"error": "invalid_api_key"}, {"WWW-Authenticate": "Bearer"})
        key_id, subscription_id = found
        wait = self._budget.take(key_id.hex)
        if wait > 0:
            raise Refused(429, {"error": "rate_limited"}, {"Retry-After": retry_after_header(wait)})
        return key_id, subscription_id

    def _reload_keys(self) -> None:
        with contextlib.suppress(Refused):
            # A failed reload leaves the view of a moment ago to answer; the request's own
            # transaction meets the outage, if it lasts.
            self.keys.reload()
        if not self.keys.loaded:
            raise unavailable()

    # -- the body ----------------------------------------------------------------------------

    async def read_json(self, request: Request) -> Any:
        """The body's JSON value, read within :data:`MAX_BODY_BYTES` and the settings' body
        read timeout (413, 408) and parsed strictly (422, :func:`.body.parse_body`)."""
        raw = await self.read_bytes(request)
        try:
            return parse_body(raw)
        except BodyRefused as exc:
            raise Refused(422, invalid(exc.field, str(exc))) from None

    async def read_bytes(self, request: Request) -> bytes:
        """The raw body, read within :data:`MAX_BODY_BYTES` and the settings' body read
        timeout (413, 408): what a signature is computed over."""
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise Refused(413, _TOO_LARGE, _CLOSE)
        chunks, size = [], 0
        with anyio.move_on_after(self.settings.body_read_timeout) as deadline:
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise Refused(413, _TOO_LARGE, _CLOSE)
                chunks.append(chunk)
        if deadline.cancelled_caught:
            raise Refused(
                408,
                {"error": "request_timeout", "message": "the body did not arrive in time"},
                _CLOSE,
            )
        return b"".join(chunks)


def intake_of(request: Request) -> Intake:
    return request.app.state.intake


def parsed(model: type[ModelT], raw: Any) -> ModelT:
    """``raw`` (a parsed body) as ``model``, or a 422 naming each field refused."""
    if not isinstance(raw, dict):
        raise Refused(422, invalid("body", "expected a JSON object"))
    try:
        return model.model_validate(raw, strict=False)
    except ValidationError as exc:
        raise Refused(422, {"error": "invalid_request", "fields": field_errors(exc)}) from None


def idempotency_header(request: Request) -> str | None:
    """The ``Idempotency-Key`` header: absent, or 1 to 200 characters (a longer one could not
    be indexed, and no sender needs one)."""
    key = request.headers.get("idempotency-key")
    if key is not None and not 1 <= len(key.strip()) <= MAX_IDEMPOTENCY_KEY_LENGTH:
        raise Refused(
            422, invalid("Idempotency-Key", f"1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
        )
    return key


def required_idempotency_header(request: Request) -> str:
    """The ``Idempotency-Key`` header of a write that has no natural key of its own: a retry
    without one could queue twice, so a request without it is refused before its body is
    read."""
    key = idempotency_header(request)
    if key is None:
        raise Refused(
            400,
            {
                "error": "idempotency_key_required",
                "message": "send an Idempotency-Key header (1 to "
                f"{MAX_IDEMPOTENCY_KEY_LENGTH} characters); a retry with the same key is "
                "answered without queueing twice",
            },
        )
    return key


def lead_id_of(request: Request) -> uuid.UUID:
    """The ``{lead_id}`` of the path; one that is not a UUID is answered as another
    subscription's lead."""
    try:
        return uuid.UUID(request.path_params["lead_id"])
    except ValueError:
        raise Refused(FORBIDDEN.status, FORBIDDEN.body) from None


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


# -- the application's exception handlers -----------------------------------------------------


def refusal(request: Request, exc: Refused) -> Response:
    """A :class:`Refused`'s own answer."""
    return exc.response


def invalid_field(request: Request, exc: Exception) -> Response:
    """A rule's refusal of one field (raised inside the transaction, which therefore wrote
    nothing): a 422 naming it."""
    return JSONResponse(invalid(getattr(exc, "field", "body"), str(exc)), status_code=422)
