"""What every intake request goes through around its own work (docs/security.md).

In the order a ``/v1/`` handler calls them: the client address's budget of failed
authentications (429), the API key (401) and the key's request budget, shared by every
worker and host (429), in :meth:`Intake.authorised` (:mod:`.budget`); the
``Idempotency-Key`` header (422); the body, read within its size and time and parsed
strictly (413, 408, 422); then one transaction
(:meth:`Intake.in_transaction`). A database that does not answer is a 503 with nothing
written, and the service recovers by itself when it returns; a value the database refuses is
a 422, never "unavailable".

A check refuses by raising :class:`Refused`; the application answers it as it stands. Every
refusal's body is an RFC 9457 problem (:func:`.problems.problem`).
"""

from __future__ import annotations

import contextlib
import logging
import re
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import anyio
import psycopg
from pydantic import BaseModel, ValidationError
from sqlalchemy import create_engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from morpheus_pipelines.crm.api.body import BodyRefused, parse_body
from morpheus_pipelines.crm.api.budget import (
    AUTH_FAILURE_POLICY,
    KEY_POLICY,
    ORIGIN_POLICY,
    RequestBudget,
    SharedBudget,
    note_allowance,
)
from morpheus_pipelines.crm.api.directory import LiveDirectory, OwnerDirectory, RoutingListener
from morpheus_pipelines.crm.api.keys import KeyDirectory
from morpheus_pipelines.crm.api.problems import QUOTA_EXCEEDED, problem, problem_response
from morpheus_pipelines.crm.api.schemas import field_errors
from morpheus_pipelines.crm.api.settings import IntakeSettings
from morpheus_pipelines.crm.repositories.intake_keys import IntakeApiKeyRepository
from morpheus_pipelines.crm.repositories.leads import CLAIM_AND_INSERT_SQL, Candidate, claimed
from morpheus_pipelines.crm.rules.request_budget import Allowance, BudgetPolicy
from morpheus_pipelines.db.autocommit import AutocommitConnections
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.observability.redaction import register_secret
from morpheus_pipelines.platform.text.origins import origin_header

MAX_BODY_BYTES = 64 * 1024
MAX_IDEMPOTENCY_KEY_LENGTH = 200
IDEMPOTENCY_KEY_PATTERN = r"^[!-~]([ -~]*[!-~])?$"
IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)
_keys = IntakeApiKeyRepository()
# What the server shows as the application of the usual lead's connections.
LEAD_STATEMENT_APPLICATION = "morpheus-intake-leads"
ModelT = TypeVar("ModelT", bound=BaseModel)


@dataclass(frozen=True)
class Answer:
    """What a handler's transaction answers: status, JSON body and any extra headers. An
    error's body is a :func:`~.problems.problem`."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] | None = None


# Another subscription's lead and no lead at all get the same answer, so ids cannot be probed.
FORBIDDEN = Answer(403, problem(403, "forbidden", "no such lead for this API key"))
_TOO_LARGE = problem(
    413, "body_too_large", f"the body is over {MAX_BODY_BYTES} bytes", limit_bytes=MAX_BODY_BYTES
)
# The rest of a body not read is not worth the connection: the client starts afresh.
_CLOSE = {"Connection": "close"}


def respond(answer: Answer) -> Response:
    if answer.status >= 400:
        return problem_response(answer.body, answer.headers)
    return JSONResponse(answer.body, status_code=answer.status, headers=answer.headers)


class Refused(Exception):
    """An early answer (401, 403, 413, 429, 503...): ``body`` is a :func:`~.problems.problem`
    of that status."""

    def __init__(self, body: dict[str, Any], headers: dict[str, str] | None = None):
        super().__init__(body["error"])
        self.response = problem_response(body, headers)


def unavailable() -> Refused:
    """The 503 a sender retries: nothing was written."""
    return Refused(
        problem(503, "database_unavailable", "nothing was written; retry"), {"Retry-After": "1"}
    )


def invalid(field_name: str, message: str) -> dict[str, Any]:
    """The 422 refusing one field."""
    return invalid_fields([{"field": field_name, "message": message}])


def invalid_fields(fields: list[dict[str, str]]) -> dict[str, Any]:
    """The 422 refusing ``fields`` (``[{"field", "message"}]``), named in ``fields``."""
    named = ", ".join(item["field"] for item in fields)
    return problem(422, "invalid_request", f"refused: {named}", fields=fields)


def _quota_exceeded(allowance: Allowance, error: str, detail: str) -> Refused:
    return Refused(
        problem(
            429,
            error,
            detail,
            type_=QUOTA_EXCEEDED,
            **{"violated-policies": [allowance.policy.name]},
        ),
        {"Retry-After": str(allowance.retry_after)},
    )


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
            # No overflow: the usual lead's statement has connections of its own (below),
            # so a worker's ceiling stays what docs/deployment.md budgets.
            pool_size=settings.pool_size,
            max_overflow=0,
            pool_timeout=5,
            # A lead acknowledged must survive a crash: commits wait for the WAL flush even on
            # a server tuned for batch work (the embedded one runs with synchronous_commit=off).
            connect_args={
                "connect_timeout": 3,
                "options": "-c synchronous_commit=on",
                "application_name": "morpheus-intake",
            },
        )
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # The same pool in autocommit, for work that is one statement: no BEGIN and no COMMIT
        # round trip, the statement's own commit waits for the flush all the same.
        self._statement_sessions = sessionmaker(
            self.engine.execution_options(isolation_level="AUTOCOMMIT"), expire_on_commit=False
        )
        self.directory = (OwnerDirectory if settings.owner_cache else LiveDirectory)(
            self._sessions.begin
        )
        self.listener = (
            RoutingListener(settings.listen_url, self.directory)
            if settings.listen_url and settings.owner_cache
            else None
        )
        self.keys = KeyDirectory(lambda: self.run(_keys.active_keys))
        # The shared budgets' own few connections, used from the event loop: one autocommit
        # statement per request, whose commit need not wait for a flush (the table is
        # UNLOGGED anyway). Never more than their number: each one is a server process.
        self.budget_connections = AutocommitConnections(
            libpq_url(settings.database_url),
            size=settings.budget_pool_size,
            options="-c synchronous_commit=off",
            application_name="morpheus-intake-budget",
        )
        self.lead_connections = lead_statement_connections(settings)
        self.budget = SharedBudget(
            self.budget_connections, BudgetPolicy(KEY_POLICY, settings.requests_per_minute)
        )
        self.auth_failures = RequestBudget(
            settings.auth_failures_per_minute, name=AUTH_FAILURE_POLICY
        )
        # Browser forms: each origin's leads share one budget, whichever key and address.
        self.origin_budget = SharedBudget(
            self.budget_connections,
            BudgetPolicy(ORIGIN_POLICY, settings.origin_requests_per_minute),
        )
        # Named on every /v1/ answer; the origin's is added to the answers it counted.
        self.policies = (self.budget.policy, self.auth_failures.policy)

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
            await self.budget_connections.close()
            await self.lead_connections.close()

    # -- the transaction ---------------------------------------------------------------------

    async def in_transaction(self, work: Callable[[Session], Any]) -> Any:
        """``work`` in one transaction on a worker thread, committed; see :meth:`run`."""
        return await anyio.to_thread.run_sync(self.run, work)

    async def in_statement(
        self, work: Callable[[Session], Any], *, otherwise: Callable[[Session], Any]
    ) -> Any:
        """``work`` in autocommit, where each statement is its own transaction (so ``work``
        must write in at most one); when it answers ``None`` (it wrote nothing), ``otherwise``
        in one transaction. One hop to a worker thread either way."""
        return await anyio.to_thread.run_sync(self._statement_or_transaction, work, otherwise)

    def _statement_or_transaction(
        self, work: Callable[[Session], Any], otherwise: Callable[[Session], Any]
    ) -> Any:
        answer = self._run_in_autocommit(work)
        return self.run(otherwise) if answer is None else answer

    async def in_autocommit(self, work: Callable[[Session], Any]) -> Any:
        """``work`` in autocommit on a worker thread: for work that writes in at most one
        statement, or only reads with no need of one snapshot."""
        return await anyio.to_thread.run_sync(self._run_in_autocommit, work)

    def _run_in_autocommit(self, work: Callable[[Session], Any]) -> Any:
        return self._guarded(lambda: self._attempt(work, self._statement_sessions))

    def run(self, work: Callable[[Session], Any]) -> Any:
        """``work``'s result, or the 503 (an outage) or 422 (a value the database will not
        store) :class:`Refused`; any other database error is a fault of the service."""
        return self._guarded(lambda: self._attempt(work))

    def _guarded(self, attempt: Callable[[], Any]) -> Any:
        try:
            try:
                return attempt()
            except DBAPIError as exc:
                # A pooled connection the server dropped (a restart): the pool is
                # invalidated and the transaction, which did not commit, is tried once more on
                # a new connection. Cheaper than pinging every connection on every checkout.
                if not exc.connection_invalidated:
                    raise
                return attempt()
        except (DBAPIError, PoolTimeout) as exc:
            raise refusal_of(exc) from None

    def _attempt(
        self, work: Callable[[Session], Any], sessions: sessionmaker[Session] | None = None
    ) -> Any:
        # Not ``begin()``: the work may roll back (a duplicate delivery gives its owner
        # charge back) and go on reading in a new transaction.
        with (sessions or self._sessions)() as session:
            result = work(session)
            session.commit()
            return result

    async def on_loop(self, query: str, params: dict[str, Any]) -> Any:
        """The first row of ``query``, one statement (its own transaction) run from the event
        loop on the usual lead's connections, no worker thread; an outage is the 503 and a
        value refused the 422, as for a transaction. A connection that broke under it is
        tried once more."""
        try:
            return await self.lead_connections.fetch_one(query, params)
        except (psycopg.Error, TimeoutError) as exc:
            raise refusal_of(exc) from None

    async def claim_and_insert(
        self, params: dict[str, Any]
    ) -> tuple[Candidate | None, dict[str, Any] | None]:
        """The usual lead's owner and lead in one statement on the event loop
        (:meth:`LeadRepository.claim_and_insert`, with its parameters). Tried again on a
        broken connection after an unseen commit, it finds its key taken: a replay."""
        return claimed(await self.on_loop(CLAIM_AND_INSERT_SQL, params))

    # -- the caller --------------------------------------------------------------------------

    async def authorised(self, request: Request) -> tuple[uuid.UUID, uuid.UUID]:
        """``(key id, subscription id)`` of the caller, or a 401/429 refusal. A client
        address past its budget of failed authentications is refused before its key is
        looked at; the key's request budget, shared by every worker and host, is taken once
        the key is known (one statement, before the request is read any further)."""
        self.admit_address(request)
        header = request.headers.get("authorization", "")
        scheme, _, presented = header.partition(" ")
        if scheme.lower() != "bearer" or not presented.strip():
            raise self.failed_authentication(
                request, problem(401, "missing_api_key", "send Authorization: Bearer <key>")
            )
        if self.keys.due():
            await anyio.to_thread.run_sync(self._reload_keys)
        found = self.keys.verify(presented.strip())
        if found is None:
            raise self.failed_authentication(
                request, problem(401, "invalid_api_key", "no active key matches")
            )
        key_id, subscription_id = found
        entry = self.keys.entry(key_id)
        if entry is not None and entry.publishable:
            await self._admit_browser_form(request, entry.origins)
        allowance = await self._take_budget(self.budget, key_id.hex)
        note_allowance(request.scope, allowance)
        if not allowance.admitted:
            raise _quota_exceeded(
                allowance,
                "rate_limited",
                f"this key's budget of {allowance.policy.quota} requests a minute is spent",
            )
        return key_id, subscription_id

    async def _admit_browser_form(self, request: Request, origins: frozenset[str]) -> None:
        """A publishable key creates leads, only from its origins, within its origin's
        budget; anything else is a 403 (docs/leads.md, "Browser forms")."""
        if (request.method, request.url.path) != ("POST", "/v1/leads"):
            raise Refused(
                problem(
                    403,
                    "publishable_key_cannot",
                    "a publishable key may only create leads; use a secret key from a server",
                )
            )
        origin = origin_header(request.headers.get("origin"))
        if origin is None or origin not in origins:
            raise Refused(
                problem(403, "origin_not_allowed", "this key may not be used from this origin")
            )
        allowance = await self._take_budget(self.origin_budget, f"origin:{origin}")
        note_allowance(request.scope, allowance)
        if not allowance.admitted:
            raise _quota_exceeded(
                allowance,
                "rate_limited",
                f"this origin's budget of {allowance.policy.quota} leads a minute is spent",
            )

    async def serves_origin(self, origin: str) -> bool:
        """Whether some active publishable key may be used from ``origin`` (a preflight's
        only question)."""
        if self.keys.due():
            await anyio.to_thread.run_sync(self._reload_keys)
        return self.keys.serves_origin(origin)

    def admit_address(self, request: Request) -> None:
        """A 429 for a client address past its budget of failed authentications, before
        anything of the request is looked at (every way in that authenticates calls it)."""
        address = client_address(request)
        if self.auth_failures.wait(address) > 0:
            allowance = self.auth_failures.allowance(address, admitted=False)
            note_allowance(request.scope, allowance)
            raise _quota_exceeded(
                allowance,
                "too_many_failed_authentications",
                "this address failed to authenticate too often; wait before trying again",
            )

    def failed_authentication(self, request: Request, body: dict[str, Any]) -> Refused:
        """The refusal of a request that did not authenticate (``body`` a 401 problem),
        counted against its address's budget of failures."""
        address = client_address(request)
        self.auth_failures.take(address)
        note_allowance(request.scope, self.auth_failures.allowance(address))
        headers = {"WWW-Authenticate": "Bearer"} if body["error"].endswith("api_key") else None
        return Refused(body, headers)

    def address_allowance(self, scope: dict[str, Any]) -> Allowance:
        """What the failure budget of the request's address says, taking nothing: the
        ``RateLimit`` of an answer no budget counted (an unknown path)."""
        client = scope.get("client")
        return self.auth_failures.allowance(client[0] if client else "unknown")

    async def _take_budget(self, budget: SharedBudget, key: str) -> Allowance:
        # On the event loop: no worker thread for one statement (docs/decisions/0055).
        try:
            return await budget.take(key)
        except (psycopg.Error, TimeoutError) as exc:
            raise refusal_of(exc) from None

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
            raise Refused(invalid(exc.field, str(exc))) from None

    async def read_bytes(self, request: Request) -> bytes:
        """The raw body, read within :data:`MAX_BODY_BYTES` and the settings' body read
        timeout (413, 408): what a signature is computed over."""
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            raise Refused(_TOO_LARGE, _CLOSE)
        chunks, size = [], 0
        with anyio.move_on_after(self.settings.body_read_timeout) as deadline:
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise Refused(_TOO_LARGE, _CLOSE)
                chunks.append(chunk)
        if deadline.cancelled_caught:
            raise Refused(
                problem(408, "request_timeout", "the body did not arrive in time"), _CLOSE
            )
        return b"".join(chunks)


def lead_statement_connections(settings: IntakeSettings) -> AutocommitConnections:
    """The connections the usual lead's one statement runs on, from the event loop
    (docs/decisions/0063): as many as the transactions' pool, each commit waiting for the WAL
    flush as theirs do (a lead acknowledged must survive a crash). A statement is given up
    only after ``lead_statement_timeout`` (a 503 "retry": a statement given up after it was
    sent may have been stored, and the retry with its key is then a replay)."""
    return AutocommitConnections(
        libpq_url(settings.database_url),
        size=settings.pool_size,
        options="-c synchronous_commit=on",
        application_name=LEAD_STATEMENT_APPLICATION,
        statement_timeout=settings.lead_statement_timeout,
    )


def intake_of(request: Request) -> Intake:
    return request.app.state.intake


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def parsed(model: type[ModelT], raw: Any) -> ModelT:
    """``raw`` (a parsed body) as ``model``, or a 422 naming each field refused."""
    if not isinstance(raw, dict):
        raise Refused(invalid("body", "expected a JSON object"))
    try:
        return model.model_validate(raw, strict=False)
    except ValidationError as exc:
        raise Refused(invalid_fields(field_errors(exc))) from None


def idempotency_header(request: Request) -> str | None:
    """The ``Idempotency-Key`` header: absent, or 1 to 200 characters (a longer one could not
    be indexed, and no sender needs one) of visible ASCII (a field value is ASCII), spaces
    only between them (:data:`IDEMPOTENCY_KEY`, the document's pattern)."""
    key = request.headers.get("idempotency-key")
    if key is None:
        return None
    if not 1 <= len(key.strip()) <= MAX_IDEMPOTENCY_KEY_LENGTH:
        raise Refused(invalid("Idempotency-Key", f"1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters"))
    if not IDEMPOTENCY_KEY.match(key):
        raise Refused(invalid("Idempotency-Key", "visible ASCII, spaces only between"))
    return key


def required_idempotency_header(request: Request) -> str:
    """The ``Idempotency-Key`` header of a write that has no natural key of its own: a retry
    without one could queue twice, so a request without it is refused before its body is
    read."""
    key = idempotency_header(request)
    if key is None:
        raise Refused(
            problem(
                400,
                "idempotency_key_required",
                "send an Idempotency-Key header (1 to "
                f"{MAX_IDEMPOTENCY_KEY_LENGTH} characters); a retry with the same key is "
                "answered without queueing twice",
            )
        )
    return key


def lead_id_of(request: Request) -> uuid.UUID:
    """The ``{lead_id}`` of the path; one that is not a UUID is answered as another
    subscription's lead."""
    try:
        return uuid.UUID(request.path_params["lead_id"])
    except ValueError:
        raise Refused(FORBIDDEN.body) from None


# SQLSTATEs of a server that is going away or cannot take a connection now, beside class 08
# (connection exceptions): an outage, worth retrying.
_UNAVAILABLE_STATES = frozenset({"53000", "53300", "57P01", "57P02", "57P03"})


def refusal_of(exc: Exception) -> Exception:
    """What to raise for a failed database call: the 503 of an outage, the 422 of a value
    the database will not store (each logged), else ``exc`` itself, a fault of the service."""
    failure = database_failure(exc)
    if failure == "unavailable":
        log_event("intake_database_unavailable", level=logging.ERROR, error=type(exc).__name__)
        return unavailable()
    if failure == "value_refused":
        log_event(
            "intake_value_refused_by_database",
            level=logging.WARNING,
            sqlstate=getattr(_driver_error(exc), "sqlstate", None),
        )
        return Refused(invalid("body", "the database cannot store a value of this request"))
    return exc


def _driver_error(exc: Exception) -> Exception:
    """psycopg's own error, whether or not SQLAlchemy wrapped it."""
    return exc.orig if isinstance(exc, DBAPIError) else exc


def database_failure(exc: Exception) -> str:
    """``unavailable`` (a 503 the sender retries), ``value_refused`` (a value of the request
    the database will not store: data exceptions, class 22, and program limits, class 54),
    or ``error`` (a fault of the service: a 500). ``exc`` is SQLAlchemy's error, or
    psycopg's own from the event loop's connections."""
    if isinstance(exc, PoolTimeout | TimeoutError):
        return "unavailable"  # no connection free, or no answer, within the timeout
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return "unavailable"
    driver_error = _driver_error(exc)
    state = getattr(driver_error, "sqlstate", None)
    if state is None:
        # No answer from a server at all (refused, timed out, reset): only a connection
        # failure is raised without one (SQLAlchemy's OperationalError wraps psycopg's).
        return "unavailable" if isinstance(driver_error, psycopg.OperationalError) else "error"
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
    return problem_response(invalid(getattr(exc, "field", "body"), str(exc)))
