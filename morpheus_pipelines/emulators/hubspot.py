"""HubSpot API emulator: the four endpoints the target-account sync uses, over real HTTP.

Endpoints (responses follow HubSpot's OpenAPI files in ``tests/emulators/hubspot-openapi``)::

    GET  /crm/v3/lists/{listId}                   endpoint "list"        ListFetchResponse
    GET  /crm/v3/lists/{listId}/memberships       endpoint "memberships" ApiCollectionResponse-
         ?limit=1..250 (default 100)&after=CURSOR                        JoinTimeAndRecordId
    POST /crm/v3/objects/companies/batch/read     endpoint "batch_read"  BatchResponseSimple-
         {"inputs":[{"id"}],"properties":[..],"propertiesWithHistory":[]}  PublicObject (200) or
                                                                           ...WithErrors (207)
    GET  /crm/v3/owners?limit=1..500&after=N      endpoint "owners"      CollectionResponse-
                                                                           PublicOwnerForwardPaging

Behaviour worth knowing:

* Memberships are sorted by recordId (numerically when numeric) and paged by an opaque keyset
  cursor, so removing a member between pages neither skips nor repeats anyone.
* Batch read answers 400 for > 100 inputs or a body missing ``inputs``/``properties``/
  ``propertiesWithHistory`` (all three are required by the spec), 207 naming missing ids with
  category OBJECT_NOT_FOUND, 200 otherwise. ``hs_object_id``, ``createdate`` and
  ``hs_lastmodifieddate`` are always returned, like HubSpot. A requested property without a
  value comes back as ``null`` (HubSpot's documented behaviour, although the spec types property
  values as plain strings); ``cleared_properties="omit"`` or ``"empty"`` changes that.
* Auth: when a token is configured every request needs ``Authorization: Bearer <token>``,
  else 401 INVALID_AUTHENTICATION.
* Rate limit (``rate_limit=100`` or ``190``): a rolling-window budget per ``rate_limit_interval_s``
  (10 s); every admitted response carries ``X-HubSpot-RateLimit-Max/-Remaining/
  -Interval-Milliseconds`` and an exhausted budget answers 429 TEN_SECONDLY_ROLLING.

Data format (``HubSpotEmulator(data)`` / ``HubSpotEmulator.from_file(path)`` / ``to_data()``)::

    {
      "token": "pat-na1-...",                       # optional; absent/null = no auth check
      "rate_limit": {"max_requests": 100, "interval_s": 10},   # optional
      "lists": {
        "19544": {
          "name": "APAC Target Accounts",
          "processingStatus": "COMPLETE",           # optional, default COMPLETE
          "processingType": "MANUAL",               # optional
          "size": 3,                                # optional; default = number of members
          "createdAt": "...", "updatedAt": "...",   # optional ISO timestamps
          "members": ["123", {"id": "456", "membershipTimestamp": "2026-07-01T00:00:00Z"}]
        }
      },
      "companies": {
        "123": {
          "properties": {"name": "Acme", "domain": "acme.com.sg", "website": null, ...},
          "createdAt": "...", "updatedAt": "...", "archived": false      # optional
        }
      },
      "owners": [{"id": "1", "email": "a@x.com", "firstName": "A", "lastName": "B",
                  "userId": 1, "archived": false}]
    }

Property values may be given as numbers or booleans; they are served as strings, as HubSpot
does. ``build_data()`` produces this format from flat company dicts.

Faults: ``emu.faults.add(Fault(...))`` or the helpers :meth:`HubSpotEmulator.fail_page`,
:meth:`~HubSpotEmulator.rate_limit`, :meth:`~HubSpotEmulator.unauthorized`,
:meth:`~HubSpotEmulator.duplicate_members`, :meth:`~HubSpotEmulator.misreport_list_size`,
:meth:`~HubSpotEmulator.report_processing_status`, :meth:`~HubSpotEmulator.drop_companies`,
plus the generic ``fail()`` and ``slow()``. See :class:`~._server.Fault` for targeting.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import bisect
import copy
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Self

from ._server import (
    GENERIC_FAULTS,
    EmulatorServer,
    Fault,
    FaultKind,
    Request,
    Response,
    RollingWindowLimiter,
    correlation_id,
    iso_now,
    serve_until_signalled,
)

__all__ = ["RATE_LIMIT_POLICIES", "HubSpotEmulator", "build_data", "main"]

MAX_BATCH_INPUTS = 100
MAX_MEMBERSHIP_LIMIT = 250
MAX_OWNERS_LIMIT = 500
COMPANY_OBJECT_TYPE_ID = "0-2"

# Always returned by a batch read, requested or not.
_ALWAYS_PROPERTIES = ("createdate", "hs_lastmodifieddate", "hs_object_id")
# Returned when a batch read asks for no properties at all.
_DEFAULT_PROPERTIES = ("createdate", "domain", "hs_lastmodifieddate", "hs_object_id", "name")

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

_LIST_RE = re.compile(r"^/crm/v3/lists/([^/]+)/?$")
_MEMBERSHIPS_RE = re.compile(r"^/crm/v3/lists/([^/]+)/memberships/?$")
_BATCH_READ_PATH = "/crm/v3/objects/companies/batch/read"
_OWNERS_RE = re.compile(r"^/crm/v3/owners/?$")

_UNSET: Any = object()


def _sort_key(record_id: str) -> tuple[int, int, str]:
    # HubSpot sorts memberships by numeric recordId; non-numeric ids (tests only) sort after.
    return (0, int(record_id), "") if record_id.isdigit() else (1, 0, record_id)


def _encode_cursor(record_id: str) -> str:
    return base64.urlsafe_b64encode(record_id.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"invalid paging cursor {cursor!r}") from exc


def _to_hubspot_value(value: Any) -> str | None:
    # HubSpot serves every property value as a string.
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ";".join(str(v) for v in value)  # multi-value properties are ';'-joined
    return str(value)


def _normalize_members(members: Iterable[Any], default_ts: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for member in members:
        if isinstance(member, Mapping):
            record_id = str(member.get("id", member.get("recordId")))
            result[record_id] = str(member.get("membershipTimestamp") or default_ts)
        else:
            result[str(member)] = default_ts
    return result


def _normalize_list(list_id: str, raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    created = str(raw.get("createdAt") or now)
    return {
        "name": str(raw.get("name") or f"List {list_id}"),
        "processingStatus": str(raw.get("processingStatus") or "COMPLETE"),
        "processingType": str(raw.get("processingType") or "MANUAL"),
        "objectTypeId": str(raw.get("objectTypeId") or COMPANY_OBJECT_TYPE_ID),
        "listVersion": int(raw.get("listVersion") or 1),
        "size": None if raw.get("size") is None else int(raw["size"]),
        "createdAt": created,
        "updatedAt": str(raw.get("updatedAt") or created),
        "members": _normalize_members(raw.get("members") or (), created),
    }


def _normalize_company(company_id: str, raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    props = {str(k): _to_hubspot_value(v) for k, v in (raw.get("properties") or {}).items()}
    created = str(raw.get("createdAt") or props.get("createdate") or now)
    updated = str(raw.get("updatedAt") or props.get("hs_lastmodifieddate") or created)
    props["hs_object_id"] = company_id
    props.setdefault("createdate", created)
    props.setdefault("hs_lastmodifieddate", updated)
    return {
        "properties": props,
        "createdAt": created,
        "updatedAt": updated,
        "archived": bool(raw.get("archived", False)),
    }


def _normalize_owner(raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    owner = {
        "id": str(raw["id"]),
        "type": str(raw.get("type") or "PERSON"),
        "archived": bool(raw.get("archived", False)),
        "createdAt": str(raw.get("createdAt") or now),
        "updatedAt": str(raw.get("updatedAt") or raw.get("createdAt") or now),
    }
    for key in ("email", "firstName", "lastName"):
        if raw.get(key) is not None:
            owner[key] = str(raw[key])
    for key in ("userId", "userIdIncludingInactive"):
        if raw.get(key) is not None:
            owner[key] = int(raw[key])
    if raw.get("teams") is not None:
        owner["teams"] = [dict(t) for t in raw["teams"]]
    return owner


class HubSpotEmulator(EmulatorServer):
    """Loopback HubSpot: lists, memberships, companies batch read, owners (see module doc).

    Args:
        data: the data dict (module docstring format); None = empty portal.
        token: required bearer token; overrides ``data["token"]``; None = take it from data.
        host, port: bind address; port 0 picks a free port.
        rate_limit: requests admitted per rolling window (HubSpot: 100, or 190 for
            higher tiers); None = no budget enforced (and no rate-limit headers).
        rate_limit_interval_s: the window, 10 s like HubSpot.
        retry_after_on_rate_limit: also send ``Retry-After`` on budget 429s (HubSpot does not).
        cleared_properties: how an empty property is served: ``"null"`` | ``"omit"`` | ``"empty"``.
        clock: monotonic clock for the rate-limit window (inject a fake one in tests).
    """

    name = "hubspot"
    endpoints = ("list", "memberships", "batch_read", "owners")
    supported_faults = GENERIC_FAULTS | {
        FaultKind.RATE_LIMIT,
        FaultKind.UNAUTHORIZED,
        FaultKind.DUPLICATE_MEMBERS,
        FaultKind.LIST_SIZE,
        FaultKind.PROCESSING_STATUS,
        FaultKind.MISSING_COMPANIES,
    }
    fault_endpoints = {
        FaultKind.DUPLICATE_MEMBERS: "memberships",
        FaultKind.LIST_SIZE: "list",
        FaultKind.PROCESSING_STATUS: "list",
        FaultKind.MISSING_COMPANIES: "batch_read",
    }

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        rate_limit: int | None = None,
        rate_limit_interval_s: float = 10.0,
        retry_after_on_rate_limit: bool = False,
        cleared_properties: str = "null",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(host=host, port=port)
        if cleared_properties not in ("null", "omit", "empty"):
            raise ValueError("cleared_properties must be 'null', 'omit' or 'empty'")
        data = data or {}
        self._lock = threading.RLock()
        self._clock = clock
        self.cleared_properties = cleared_properties
        self.retry_after_on_rate_limit = retry_after_on_rate_limit
        self._token: str | None = token if token is not None else data.get("token")
        self._lists: dict[str, dict[str, Any]] = {}
        # Sorted member ids per list, rebuilt only after a membership change: sorting 100,000
        # ids on every page request made the emulator, not the client, the bottleneck.
        self._members_version = 0
        self._sorted_members: dict[str, tuple[int, list[str], list[tuple[int, int, str]]]] = {}
        self._companies: dict[str, dict[str, Any]] = {}
        self._owners: list[dict[str, Any]] = []
        self._limiter: RollingWindowLimiter | None = None
        self.load(data)
        configured = data.get("rate_limit") or {}
        if rate_limit is None and configured:
            rate_limit = int(configured["max_requests"])
            rate_limit_interval_s = float(configured.get("interval_s", rate_limit_interval_s))
        self.set_rate_limit(rate_limit, rate_limit_interval_s)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Self:
        """Build an emulator from a JSON data file (kwargs as for the constructor)."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), **kwargs)

    # -- state -------------------------------------------------------------------------------

    def load(self, data: Mapping[str, Any]) -> None:
        """Replace lists, companies and owners with those in ``data``."""
        now = iso_now()
        with self._lock:
            self._members_version += 1
            self._lists = {
                str(k): _normalize_list(str(k), v, now)
                for k, v in (data.get("lists") or {}).items()
            }
            self._companies = {
                str(k): _normalize_company(str(k), v, now)
                for k, v in (data.get("companies") or {}).items()
            }
            self._owners = [_normalize_owner(o, now) for o in data.get("owners") or ()]

    def to_data(self) -> dict[str, Any]:
        """The current state in the data-file format."""
        with self._lock:
            lists = {}
            for list_id, lst in self._lists.items():
                entry = {k: v for k, v in lst.items() if k != "members"}
                entry["members"] = [
                    {"id": rid, "membershipTimestamp": ts} for rid, ts in lst["members"].items()
                ]
                lists[list_id] = entry
            data: dict[str, Any] = {
                "token": self._token,
                "lists": lists,
                "companies": copy.deepcopy(self._companies),
                "owners": copy.deepcopy(self._owners),
            }
            if self._limiter is not None:
                data["rate_limit"] = {
                    "max_requests": self._limiter.max_requests,
                    "interval_s": self._limiter.interval_s,
                }
            return data

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_data` as JSON."""
        Path(path).write_text(json.dumps(self.to_data(), indent=2), encoding="utf-8")

    @property
    def token(self) -> str | None:
        """The bearer token required, or None when auth is off."""
        return self._token

    def set_token(self, token: str | None) -> None:
        """Require a different token (None turns auth off)."""
        with self._lock:
            self._token = token

    def set_rate_limit(self, max_requests: int | None, interval_s: float = 10.0) -> None:
        """Enforce ``max_requests`` per rolling ``interval_s`` (None switches it off)."""
        with self._lock:
            self._limiter = (
                None
                if max_requests is None
                else RollingWindowLimiter(max_requests, interval_s, self._clock)
            )

    def set_company(
        self,
        company_id: str | int,
        properties: Mapping[str, Any] | None = None,
        *,
        replace: bool = False,
        archived: bool | None = None,
    ) -> None:
        """Create or update a company; bumps ``updatedAt``/``hs_lastmodifieddate`` to now
        unless ``properties`` sets ``hs_lastmodifieddate``."""
        company_id = str(company_id)
        now = iso_now()
        with self._lock:
            current = self._companies.get(company_id)
            if current is None or replace:
                created = current["createdAt"] if current else now
                raw: dict[str, Any] = {"properties": dict(properties or {}), "createdAt": created}
                raw["updatedAt"] = (properties or {}).get("hs_lastmodifieddate") or now
                raw["archived"] = bool(archived)
                self._companies[company_id] = _normalize_company(company_id, raw, now)
                return
            props = current["properties"]
            props.update({str(k): _to_hubspot_value(v) for k, v in (properties or {}).items()})
            if properties is None or "hs_lastmodifieddate" not in properties:
                props["hs_lastmodifieddate"] = now
            current["updatedAt"] = props["hs_lastmodifieddate"]
            if archived is not None:
                current["archived"] = archived

    def set_companies(
        self, companies: Mapping[str, Mapping[str, Any]], *, replace_all: bool = True
    ) -> None:
        """Set many companies (data-file shape: id -> {"properties": ...}); by default the
        companies not named are deleted."""
        now = iso_now()
        with self._lock:
            if replace_all:
                self._companies = {}
            for company_id, raw in companies.items():
                self._companies[str(company_id)] = _normalize_company(str(company_id), raw, now)

    def remove_company(self, company_id: str | int) -> None:
        """Delete a company (a batch read then reports it missing); list membership stays."""
        with self._lock:
            self._companies.pop(str(company_id), None)

    def clear_property(self, company_id: str | int, name: str) -> None:
        """Clear one property, as a HubSpot user emptying a field would."""
        self.set_company(company_id, {name: None})

    def company(self, company_id: str | int) -> dict[str, Any] | None:
        """A copy of one stored company, or None."""
        with self._lock:
            found = self._companies.get(str(company_id))
            return copy.deepcopy(found)

    def set_list(
        self,
        list_id: str | int,
        *,
        name: str | None = None,
        processing_status: str | None = None,
        processing_type: str | None = None,
        size: int | None = _UNSET,
        members: Iterable[Any] | None = None,
    ) -> None:
        """Create or change a list. ``size=None`` reverts to the true member count."""
        list_id = str(list_id)
        now = iso_now()
        with self._lock:
            self._members_version += 1
            lst = self._lists.setdefault(list_id, _normalize_list(list_id, {}, now))
            if name is not None:
                lst["name"] = name
            if processing_status is not None:
                lst["processingStatus"] = processing_status
            if processing_type is not None:
                lst["processingType"] = processing_type
            if size is not _UNSET:
                lst["size"] = None if size is None else int(size)
            if members is not None:
                lst["members"] = _normalize_members(members, now)
            lst["updatedAt"] = now

    def set_list_members(self, list_id: str | int, members: Iterable[Any]) -> None:
        """Replace a list's members (ids or ``{"id", "membershipTimestamp"}`` dicts)."""
        self.set_list(list_id, members=members)

    def add_list_members(self, list_id: str | int, members: Iterable[Any]) -> None:
        """Add members to a list, keeping existing ones."""
        now = iso_now()
        with self._lock:
            self._members_version += 1
            lst = self._lists.setdefault(str(list_id), _normalize_list(str(list_id), {}, now))
            lst["members"].update(_normalize_members(members, now))
            lst["updatedAt"] = now

    def remove_list_members(self, list_id: str | int, record_ids: Iterable[str | int]) -> None:
        """Remove members from a list."""
        with self._lock:
            self._members_version += 1
            lst = self._lists[str(list_id)]
            for record_id in record_ids:
                lst["members"].pop(str(record_id), None)
            lst["updatedAt"] = iso_now()

    def list_members(self, list_id: str | int) -> list[str]:
        """Member record ids in HubSpot's paging order."""
        with self._lock:
            return sorted(self._lists[str(list_id)]["members"], key=_sort_key)

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
        retry_after: int | None = None,
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

    # -- pipeline hooks ----------------------------------------------------------------------

    def route(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        """Map HubSpot paths to endpoint names."""
        if method == "GET":
            if m := _MEMBERSHIPS_RE.match(path):
                return "memberships", {"list_id": m.group(1)}
            if m := _LIST_RE.match(path):
                return "list", {"list_id": m.group(1)}
            if _OWNERS_RE.match(path):
                return "owners", {}
        if method == "POST" and path.rstrip("/") == _BATCH_READ_PATH:
            return "batch_read", {}
        return None

    def page_of(self, request: Request) -> int | None:
        """0-based page index of memberships/owners requests."""
        if request.endpoint == "memberships":
            if request.query.get("before") and not request.query.get("after"):
                return None  # backwards paging has no forward page index
            start, limit, _ = self._membership_window(request)
            return start // limit
        if request.endpoint == "owners":
            start, limit = self._owner_window(request)
            return start // limit
        return None

    def error_body(self, status: int, message: str, **extra: Any) -> dict[str, Any]:
        """HubSpot's error shape (Error schema: category, correlationId, message)."""
        category = {
            400: "VALIDATION_ERROR",
            401: "INVALID_AUTHENTICATION",
            403: "MISSING_SCOPES",
            404: "OBJECT_NOT_FOUND",
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

    def handle(self, request: Request, fault: Fault | None) -> Response:
        """Dispatch to the endpoint handlers."""
        handler = {
            "list": self._handle_list,
            "memberships": self._handle_memberships,
            "batch_read": self._handle_batch_read,
            "owners": self._handle_owners,
        }[request.endpoint]
        try:
            return handler(request, fault)
        except _BadRequest as exc:
            return Response(400, self.error_body(400, str(exc)))

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

    def _handle_list(self, request: Request, fault: Fault | None) -> Response:
        list_id = request.params["list_id"]
        with self._lock:
            lst = self._lists.get(list_id)
            if lst is None:
                return Response(404, self.error_body(404, f"List {list_id} does not exist."))
            size = len(lst["members"]) if lst["size"] is None else lst["size"]
            status = lst["processingStatus"]
            body = {k: lst[k] for k in ("name", "processingType", "objectTypeId", "listVersion")}
            created, updated = lst["createdAt"], lst["updatedAt"]
        if fault is not None and fault.kind is FaultKind.LIST_SIZE:
            size = size + 1 if fault.list_size is None else fault.list_size
        if fault is not None and fault.kind is FaultKind.PROCESSING_STATUS:
            status = fault.processing_status
        body.update(
            listId=list_id,
            processingStatus=status,
            size=size,
            createdAt=created,
            updatedAt=updated,
            filtersUpdatedAt=created,
            createdById="1",
            updatedById="1",
            # Real responses also carry the size here, as a string.
            additionalProperties={"hs_list_size": str(size), "hs_last_record_added_at": updated},
        )
        return Response(200, {"list": body})

    def _membership_window(self, request: Request) -> tuple[int, int, list[str]]:
        """(start index, limit, sorted ids) of an ``after``-paged memberships request."""
        limit = _int_param(request.query, "limit", 100, 1, MAX_MEMBERSHIP_LIMIT)
        ids, keys = self._sorted_member_ids(request.params["list_id"])
        after = request.query.get("after")
        if not after:
            return 0, limit, ids
        try:
            cursor = _decode_cursor(after)
        except ValueError as exc:
            raise _BadRequest(str(exc)) from exc
        return bisect.bisect_right(keys, _sort_key(cursor)), limit, ids

    def _sorted_member_ids(self, list_id: str) -> tuple[list[str], list[tuple[int, int, str]]]:
        """Member ids in HubSpot's order and their sort keys, cached per membership version."""
        with self._lock:
            cached = self._sorted_members.get(list_id)
            if cached is not None and cached[0] == self._members_version:
                return cached[1], cached[2]
            lst = self._lists.get(list_id)
            ids = sorted(lst["members"], key=_sort_key) if lst is not None else []
            keys = [_sort_key(i) for i in ids]
            self._sorted_members[list_id] = (self._members_version, ids, keys)
            return ids, keys

    def _handle_memberships(self, request: Request, fault: Fault | None) -> Response:
        list_id = request.params["list_id"]
        with self._lock:
            lst = self._lists.get(list_id)
            if lst is None:
                return Response(404, self.error_body(404, f"List {list_id} does not exist."))
            timestamps = lst["members"]
        before = request.query.get("before")
        paging: dict[str, Any] = {}
        if before and not request.query.get("after"):
            # ``before`` pages backwards in descending order; ``after`` wins when both are set.
            limit = _int_param(request.query, "limit", 100, 1, MAX_MEMBERSHIP_LIMIT)
            ids, keys = self._sorted_member_ids(list_id)
            end = bisect.bisect_left(keys, _sort_key(_decode_or_400(before)))
            page_ids = list(reversed(ids[max(0, end - limit) : end]))
            if end - limit > 0 and page_ids:
                paging["prev"] = {"before": _encode_cursor(page_ids[-1])}
        else:
            start, limit, ids = self._membership_window(request)
            page_ids = ids[start : start + limit]
            if start + limit < len(ids):
                paging["next"] = {"after": _encode_cursor(page_ids[-1])}
            if fault is not None and fault.kind is FaultKind.DUPLICATE_MEMBERS and page_ids:
                if start > 0:
                    page_ids.insert(0, ids[start - 1])
                else:
                    page_ids.append(page_ids[0])
        with self._lock:
            results = [{"recordId": i, "membershipTimestamp": timestamps.get(i)} for i in page_ids]
        body: dict[str, Any] = {"results": results}
        if paging:
            body["paging"] = paging
        return Response(200, body)

    def _handle_batch_read(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        try:
            payload = request.json
        except ValueError as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise _BadRequest("Invalid input JSON: expected an object")
        for key in ("inputs", "properties", "propertiesWithHistory"):
            if not isinstance(payload.get(key), list):
                raise _BadRequest(f"Invalid input JSON: '{key}' must be an array")
        inputs = payload["inputs"]
        if len(inputs) > MAX_BATCH_INPUTS:
            raise _BadRequest(
                f"Batch input size {len(inputs)} exceeds the limit of {MAX_BATCH_INPUTS} inputs"
            )
        id_property = payload.get("idProperty")
        if id_property not in (None, "hs_object_id"):
            raise _BadRequest(f"idProperty {id_property!r} is not supported by the emulator")
        ids: list[str] = []
        for item in inputs:
            if not isinstance(item, dict) or item.get("id") in (None, ""):
                raise _BadRequest("Invalid input JSON: every input needs an 'id'")
            if str(item["id"]) not in ids:  # HubSpot answers each id once
                ids.append(str(item["id"]))
        requested = [str(p) for p in payload["properties"]] or list(_DEFAULT_PROPERTIES)
        wanted = list(dict.fromkeys([*requested, *_ALWAYS_PROPERTIES]))
        dropped: set[str] = set()
        if fault is not None and fault.kind is FaultKind.MISSING_COMPANIES:
            dropped = set(fault.ids) if fault.ids is not None else set(ids[:1])

        results, missing = [], []
        with self._lock:
            for company_id in ids:
                company = self._companies.get(company_id)
                if company is None or company["archived"] or company_id in dropped:
                    missing.append(company_id)
                    continue
                results.append(self._company_object(company_id, company, wanted))
        body: dict[str, Any] = {
            "status": "COMPLETE",
            "results": results,
            "startedAt": started,
            "completedAt": iso_now(),
        }
        if not missing:
            return Response(200, body)
        body["numErrors"] = 1
        body["errors"] = [
            {
                "status": "error",
                "category": "OBJECT_NOT_FOUND",
                "message": (
                    "Could not get some COMPANY objects, they may be deleted or not exist. "
                    "Check that ids are valid."
                ),
                "context": {"ids": missing},
                "errors": [],
                "links": {},
            }
        ]
        return Response(207, body)

    def _company_object(
        self, company_id: str, company: Mapping[str, Any], wanted: list[str]
    ) -> dict[str, Any]:
        props: dict[str, str | None] = {}
        for name in wanted:
            value = company["properties"].get(name)
            if value is None and self.cleared_properties == "omit":
                continue
            props[name] = "" if value is None and self.cleared_properties == "empty" else value
        return {
            "id": company_id,
            "properties": props,
            "createdAt": company["createdAt"],
            "updatedAt": company["updatedAt"],
            "archived": False,
        }

    def _owner_window(self, request: Request) -> tuple[int, int]:
        limit = _int_param(request.query, "limit", 100, 1, MAX_OWNERS_LIMIT)
        return _int_param(request.query, "after", 0, 0, None), limit

    def _handle_owners(self, request: Request, fault: Fault | None) -> Response:
        start, limit = self._owner_window(request)
        archived = request.query.get("archived", "false").lower() == "true"
        email = request.query.get("email", "").lower()
        with self._lock:
            owners = [
                copy.deepcopy(o)
                for o in self._owners
                if o["archived"] == archived and (not email or o.get("email", "").lower() == email)
            ]
        body: dict[str, Any] = {"results": owners[start : start + limit]}
        if start + limit < len(owners):
            body["paging"] = {"next": {"after": str(start + limit)}}
        return Response(200, body)


class _BadRequest(ValueError):
    """Becomes a 400 VALIDATION_ERROR."""


def _decode_or_400(cursor: str) -> str:
    try:
        return _decode_cursor(cursor)
    except ValueError as exc:
        raise _BadRequest(str(exc)) from exc


def _int_param(
    query: Mapping[str, str], name: str, default: int, low: int, high: int | None
) -> int:
    raw = query.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise _BadRequest(f"'{name}' must be an integer, got {raw!r}") from exc
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f">= {low}"
        raise _BadRequest(f"'{name}' must be {bound}, got {value}")
    return value


def build_data(
    companies: Iterable[Mapping[str, Any]],
    *,
    list_id: str | int = "19544",
    list_name: str = "APAC Target Accounts",
    token: str | None = None,
    members: Iterable[Any] | None = None,
    owners: Iterable[Mapping[str, Any]] = (),
    processing_status: str = "COMPLETE",
    membership_timestamp: str | None = None,
) -> dict[str, Any]:
    """Emulator data from flat company dicts.

    Each company needs ``id`` (or ``hs_object_id``); ``createdAt``, ``updatedAt``,
    ``archived`` and a nested ``properties`` dict are honoured, every other key is a property.
    All companies are list members unless ``members`` (ids) is given.
    """
    ts = membership_timestamp or iso_now()
    out_companies: dict[str, Any] = {}
    for raw in companies:
        company_id = str(raw.get("id") or raw.get("hs_object_id") or "")
        if not company_id:
            raise ValueError(f"company without id: {raw!r}")
        special = {"id", "properties", "createdAt", "updatedAt", "archived"}
        props = {k: v for k, v in raw.items() if k not in special}
        props.update(raw.get("properties") or {})
        entry: dict[str, Any] = {"properties": props}
        for key in ("createdAt", "updatedAt", "archived"):
            if key in raw:
                entry[key] = raw[key]
        out_companies[company_id] = entry
    member_ids = list(out_companies) if members is None else [str(m) for m in members]
    return {
        "token": token,
        "lists": {
            str(list_id): {
                "name": list_name,
                "processingStatus": processing_status,
                "members": [{"id": m, "membershipTimestamp": ts} for m in member_ids],
            }
        },
        "companies": out_companies,
        "owners": [dict(o) for o in owners],
    }


def sample_data(token: str | None = None) -> dict[str, Any]:
    """A tiny APAC portal for ``morpheus emulate hubspot`` without ``--data``."""
    return build_data(
        [
            {
                "id": "9001",
                "name": "Lion City Logistics",
                "domain": "lioncitylogistics.com.sg",
                "website": "https://www.lioncitylogistics.com.sg",
                "hs_additional_domains": "lcl.sg",
                "portal_id__c": "100001",
                "account_id__c": "ACC-SG-001",
                "account_allias__c": "LCL",
            },
            {
                "id": "9002",
                "name": "Harbour Bridge Analytics",
                "domain": "harbourbridge.com.au",
                "website": "harbourbridge.com.au",
                "portal_id__c": None,
                "account_id__c": "ACC-AU-002",
            },
            {
                "id": "9003",
                "name": "Sakura Devices",
                "domain": None,
                "website": "https://sakura-devices.co.jp/",
            },
        ],
        token=token,
        owners=[
            {"id": "501", "email": "apac.sales@example.com", "firstName": "Mei", "userId": 7001}
        ],
    )


def main(argv: list[str] | None = None) -> int:
    """``morpheus emulate hubspot``: serve the emulator until Ctrl-C / SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="morpheus emulate hubspot", description="Serve a HubSpot API emulator on loopback."
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one")
    parser.add_argument("--data", type=Path, help="JSON data file (default: a small sample)")
    parser.add_argument("--token", help="bearer token to require (overrides the data file)")
    parser.add_argument(
        "--rate-limit", type=int, help="requests per rolling 10 s to admit (HubSpot: 100 or 190)"
    )
    args = parser.parse_args(argv)
    data = (
        json.loads(args.data.read_text(encoding="utf-8")) if args.data else sample_data(args.token)
    )
    emulator = HubSpotEmulator(
        data, token=args.token, host=args.host, port=args.port, rate_limit=args.rate_limit
    )
    return serve_until_signalled(emulator)


if __name__ == "__main__":
    raise SystemExit(main())
