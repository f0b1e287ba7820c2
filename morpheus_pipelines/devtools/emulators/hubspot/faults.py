"""HubSpot's auth and rate limits, and the faults specific to the emulated HubSpot.

The preflight checks the bearer token and the rolling budget; the fault helpers register the
failures ``docs/reliability.md`` lists (429 policies, 401, duplicate members, misreported list
size or status, missing companies, batch writes failing some inputs, writes applied but their
answer lost) on top of the generic ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .._faults import Fault, FaultKind
from .._messages import Request, Response, correlation_id
from .portal import Portal

# policy -> (message, X-HubSpot-RateLimit-Max, Interval-Milliseconds)
RATE_LIMIT_POLICIES: dict[str, tuple[str, int, int]] = {
    "TEN_SECONDLY_ROLLING": ("You have reached your ten_secondly_rolling limit.", 100, 10_000),
    "SECONDLY": ("You have reached your secondly limit.", 10, 1_000),
    "DAILY": ("You have reached your daily limit.", 100, 10_000),
}
DAILY_LIMIT = 250_000

_AUTH_MESSAGE = (
    "Authentication credentials not found. This API supports OAuth 2.0 authentication and you "
    "can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview"
)


class HubSpotFaults(Portal):
    """Fault helpers, the auth/rate-limit preflight and HubSpot's error responses."""

    # -- fault helpers -----------------------------------------------------------------------

    def fail_page(
        self, page: int, kind: str | int = "500", *, times: int | None = 1, **params: Any
    ) -> Fault:
        """Fail memberships page ``page`` (0-based) ``times`` times: a status code
        (``"500"``, ``"503"``, ...), ``"reset"``, ``"truncated_json"``, ``"short_body"``,
        ``"rate_limit"`` or ``"slow"`` (pass ``delay=``)."""
        return self.fail(kind, endpoint="memberships", page=page, times=times, **params)

    def rate_limit(
        self,
        policy: str = "TEN_SECONDLY_ROLLING",
        *,
        retry_after: int | str | None = None,
        rate_headers: bool = True,
        endpoint: str | None = None,
        page: int | None = None,
        nth: int | None = None,
        times: int | None = 1,
    ) -> Fault:
        """Answer 429 with HubSpot's body for ``policy`` (TEN_SECONDLY_ROLLING, SECONDLY,
        DAILY), with/without ``Retry-After`` and the ``X-HubSpot-RateLimit-*`` headers."""
        if policy not in RATE_LIMIT_POLICIES:
            raise ValueError(f"policy must be one of {sorted(RATE_LIMIT_POLICIES)}")
        return self.fail(
            FaultKind.RATE_LIMIT,
            endpoint=endpoint,
            page=page,
            nth=nth,
            times=times,
            policy=policy,
            retry_after=retry_after,
            rate_headers=rate_headers,
        )

    def unauthorized(
        self, *, endpoint: str | None = None, nth: int | None = None, times: int | None = 1
    ) -> Fault:
        """Answer 401 INVALID_AUTHENTICATION even with the right token."""
        return self.fail(FaultKind.UNAUTHORIZED, endpoint=endpoint, nth=nth, times=times)

    def duplicate_members(self, page: int = 1, *, times: int | None = 1) -> Fault:
        """Memberships page ``page`` repeats a record id: page N>0 starts with the last record
        of page N-1; page 0 repeats its own first record at its end."""
        return self.fail(FaultKind.DUPLICATE_MEMBERS, page=page, times=times)

    def misreport_list_size(self, size: int | None = None, *, times: int | None = 1) -> Fault:
        """The list endpoint reports ``size`` (default: true size + 1)."""
        return self.fail(FaultKind.LIST_SIZE, times=times, list_size=size)

    def report_processing_status(
        self, status: str = "PROCESSING", *, times: int | None = 1
    ) -> Fault:
        """The list endpoint reports ``processingStatus=status``."""
        return self.fail(FaultKind.PROCESSING_STATUS, times=times, processing_status=status)

    def drop_companies(
        self,
        ids: Iterable[str | int] | None = None,
        *,
        nth: int | None = None,
        times: int | None = 1,
    ) -> Fault:
        """A batch read treats ``ids`` (default: its first input) as missing -> 207."""
        return self.fail(
            FaultKind.MISSING_COMPANIES,
            nth=nth,
            times=times,
            ids=None if ids is None else tuple(str(i) for i in ids),
        )

    def fail_inputs(
        self,
        endpoint: str,
        ids: Iterable[str | int] | None = None,
        *,
        every: int | None = None,
        nth: int | None = None,
        times: int | None = 1,
    ) -> Fault:
        """A batch write (``contacts_batch_upsert``, ``tasks_batch_upsert``,
        ``calls_batch_upsert``, ``associations_associate_default``) answers 207: the inputs
        named by ``ids`` (their ``id`` values, ``"from:to"`` for associations) and every
        ``every``-th input fail and are not written; the others are. Neither given: the
        first input fails."""
        return self.fail(
            FaultKind.PARTIAL_FAILURE,
            endpoint=endpoint,
            nth=nth,
            times=times,
            ids=None if ids is None else tuple(str(i) for i in ids),
            every=every,
        )

    def lose_answer(
        self,
        endpoint: str | None = None,
        *,
        hold: float = 0.0,
        nth: int | None = None,
        times: int | None = 1,
    ) -> Fault:
        """The request is applied, then its answer is lost: the connection is reset, after
        ``hold`` seconds when given (long enough and the client's read timeout fires
        first). A client retrying a write must not write twice."""
        return self.fail(FaultKind.ANSWER_LOST, endpoint=endpoint, nth=nth, times=times, hold=hold)

    def error_body(self, status: int, message: str, **extra: Any) -> dict[str, Any]:
        """HubSpot's error shape (Error schema: category, correlationId, message)."""
        category = {
            400: "VALIDATION_ERROR",
            401: "INVALID_AUTHENTICATION",
            403: "MISSING_SCOPES",
            404: "OBJECT_NOT_FOUND",
            409: "CONFLICT",
            429: "RATE_LIMITS",
        }.get(status, "INTERNAL_ERROR" if status >= 500 else "VALIDATION_ERROR")
        body = {
            "status": "error",
            "message": message,
            "correlationId": correlation_id(),
            "category": category,
        }
        body.update(extra)
        return body

    def preflight(self, request: Request) -> Response | None:
        """Bearer-token check, then the rolling rate-limit budget."""
        with self._lock:
            token, limiter = self._token, self._limiter
        if token is not None and request.headers.get("Authorization", "") != f"Bearer {token}":
            return self._unauthorized_response()
        if limiter is None:
            return None
        admitted, remaining, wait_s = limiter.acquire()
        headers = {
            "X-HubSpot-RateLimit-Max": str(limiter.max_requests),
            "X-HubSpot-RateLimit-Remaining": str(remaining),
            "X-HubSpot-RateLimit-Interval-Milliseconds": str(int(limiter.interval_s * 1000)),
        }
        if admitted:
            request.response_headers.update(headers)
            return None
        if self.retry_after_on_rate_limit:
            headers["Retry-After"] = str(max(1, math.ceil(wait_s)))
        return Response(429, self._rate_limit_body("TEN_SECONDLY_ROLLING"), headers)

    def fault_response(self, request: Request, fault: Fault) -> Response | None:
        """Status, 429 and 401 faults; data-level faults are applied by the handlers."""
        if fault.kind is FaultKind.UNAUTHORIZED:
            return self._unauthorized_response()
        if fault.kind is FaultKind.RATE_LIMIT:
            return self._rate_limit_fault_response(fault)
        return super().fault_response(request, fault)

    # -- responses ---------------------------------------------------------------------------

    def _unauthorized_response(self) -> Response:
        return Response(401, self.error_body(401, _AUTH_MESSAGE))

    def _rate_limit_body(self, policy: str) -> dict[str, Any]:
        # HubSpot's 429 body has errorType/policyName instead of the Error schema's category.
        return {
            "status": "error",
            "message": RATE_LIMIT_POLICIES[policy][0],
            "errorType": "RATE_LIMIT",
            "correlationId": correlation_id(),
            "policyName": policy,
        }

    def _rate_limit_fault_response(self, fault: Fault) -> Response:
        _, max_requests, interval_ms = RATE_LIMIT_POLICIES[fault.policy]
        headers: dict[str, str] = {}
        if fault.rate_headers:
            with self._lock:
                if self._limiter is not None and fault.policy != "SECONDLY":
                    max_requests = self._limiter.max_requests
                    interval_ms = int(self._limiter.interval_s * 1000)
            daily = fault.policy == "DAILY"
            headers = {
                "X-HubSpot-RateLimit-Max": str(max_requests),
                # A daily stop leaves the short window untouched; the others are spent.
                "X-HubSpot-RateLimit-Remaining": str(max_requests - 1 if daily else 0),
                "X-HubSpot-RateLimit-Interval-Milliseconds": str(interval_ms),
            }
            if daily:
                headers["X-HubSpot-RateLimit-Daily"] = str(DAILY_LIMIT)
                headers["X-HubSpot-RateLimit-Daily-Remaining"] = "0"
        if fault.retry_after is not None:
            headers["Retry-After"] = str(fault.retry_after)
        headers.update(fault.headers)
        return Response(429, self._rate_limit_body(fault.policy), headers)
