"""The HubSpot emulator: one loopback server routing to the endpoint mixins (see the
package docstring for the endpoints, the data format and the faults)."""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Self
from urllib.parse import unquote

from .._faults import GENERIC_FAULTS, Fault, FaultKind
from .._messages import Request, Response
from .._rate_limit import RollingWindowLimiter
from .._server import EmulatorServer, serve_until_signalled
from .associations import AssociationEndpoints
from .companies import CompanyEndpoints
from .contacts import ContactEndpoints
from .deals import DealEndpoints
from .engagements import ENGAGEMENT_TYPES, EngagementEndpoints
from .faults import HubSpotFaults
from .fixtures import sample_data
from .lists import ListEndpoints
from .objects import UPSERT_TYPES, ObjectWriteEndpoints
from .owners import OwnerEndpoints
from .params import _BadRequest
from .properties import PropertyEndpoints
from .search import SearchEndpoints, object_type

__all__ = ["HubSpotEmulator", "main"]

_LIST_RE = re.compile(r"^/crm/v3/lists/([^/]+)/?$")
_MEMBERSHIPS_RE = re.compile(r"^/crm/v3/lists/([^/]+)/memberships/?$")
_MEMBERSHIPS_ADD_RE = re.compile(r"^/crm/v3/lists/([^/]+)/memberships/add/?$")
_BATCH_READ_PATH = "/crm/v3/objects/companies/batch/read"
_CONTACTS_BATCH_UPDATE_PATH = "/crm/v3/objects/contacts/batch/update"
_CONTACTS_BATCH_READ_PATH = "/crm/v3/objects/contacts/batch/read"
_OWNERS_RE = re.compile(r"^/crm/v3/owners/?$")
_SEARCH_RE = re.compile(r"^/crm/v3/objects/([^/]+)/search/?$")
_SEARCH_ENDPOINTS = {"contacts": "contacts_search", "deals": "deals_search"} | {
    engagement_type: "engagements_search" for engagement_type in ENGAGEMENT_TYPES
}
_DEALS_BATCH_READ_RE = re.compile(r"^/crm/v3/objects/(?:deals|0-3)/batch/read/?$")
_ASSOCIATIONS_RE = re.compile(r"^/crm/v4/associations/([^/]+)/(?:contacts|0-1)/batch/read/?$")
_ASSOCIATED_TYPES = frozenset({"deals", *ENGAGEMENT_TYPES})
_UPSERT_RE = re.compile(rf"^/crm/v3/objects/({'|'.join(UPSERT_TYPES)})/batch/upsert/?$")
_ASSOCIATE_DEFAULT_RE = re.compile(
    r"^/crm/v4/associations/([^/]+)/([^/]+)/batch/associate/default/?$"
)
_LISTS_PATH = "/crm/v3/lists"
_LIST_BY_NAME_RE = re.compile(r"^/crm/v3/lists/object-type-id/([^/]+)/name/([^/]+)/?$")
_MEMBERSHIPS_CHANGE_RE = re.compile(r"^/crm/v3/lists/([^/]+)/memberships/add-and-remove/?$")
_PROPERTIES_RE = re.compile(r"^/crm/v3/properties/([^/]+)/?$")
_PROPERTY_RE = re.compile(r"^/crm/v3/properties/([^/]+)/([^/]+)/?$")
# The batch writes a PARTIAL_FAILURE fault can fail inputs of.
BATCH_WRITE_ENDPOINTS = (
    *(f"{upserted}_batch_upsert" for upserted in UPSERT_TYPES),
    "associations_associate_default",
)


class HubSpotEmulator(
    HubSpotFaults,
    ListEndpoints,
    CompanyEndpoints,
    ContactEndpoints,
    EngagementEndpoints,
    DealEndpoints,
    SearchEndpoints,
    OwnerEndpoints,
    ObjectWriteEndpoints,
    AssociationEndpoints,
    PropertyEndpoints,
    EmulatorServer,
):
    """Loopback HubSpot: lists and their memberships, companies batch read, contacts batch
    update, owners, the search and associations of contacts, deals and engagements, and the
    writes of Morpheus's outbox (upserts of contacts, tasks and calls, default associations,
    contact lists, unique properties); see the package doc.

    Args:
        data: the data dict (package docstring format); None = empty portal.
        token: required bearer token; overrides ``data["token"]``; None = take it from data.
        host, port: bind address; port 0 picks a free port.
        rate_limit: requests admitted per rolling window (HubSpot: 100, or 190 for
            higher tiers); None = no budget enforced (and no rate-limit headers).
        rate_limit_interval_s: the window, 10 s like HubSpot.
        retry_after_on_rate_limit: also send ``Retry-After`` on budget 429s (HubSpot does not).
        cleared_properties: how an empty property is served: ``"null"`` | ``"omit"`` | ``"empty"``.
        clock: monotonic clock for the rate-limit window (inject a fake one in tests).
        morpheus_properties: True creates the unique properties Morpheus keys its upserts by
            (``morpheus_lead_key`` on contacts, ``morpheus_intent_key`` on tasks and calls),
            False removes them, None leaves them as ``data["properties"]`` says.
    """

    name = "hubspot"
    endpoints = (
        "list",
        "memberships",
        "memberships_add",
        "batch_read",
        "contacts_batch_update",
        "contacts_batch_read",
        "owners",
        "engagements_search",
        "associations_batch_read",
        "contacts_search",
        "deals_search",
        "deals_batch_read",
        *BATCH_WRITE_ENDPOINTS,
        "lists_create",
        "list_by_name",
        "memberships_add_and_remove",
        "memberships_clear",
        "properties_create",
        "property_read",
    )
    supported_faults = GENERIC_FAULTS | {
        FaultKind.RATE_LIMIT,
        FaultKind.UNAUTHORIZED,
        FaultKind.DUPLICATE_MEMBERS,
        FaultKind.LIST_SIZE,
        FaultKind.PROCESSING_STATUS,
        FaultKind.MISSING_COMPANIES,
        FaultKind.PARTIAL_FAILURE,
        FaultKind.ANSWER_LOST,
    }
    fault_endpoints = {
        FaultKind.DUPLICATE_MEMBERS: "memberships",
        FaultKind.LIST_SIZE: "list",
        FaultKind.PROCESSING_STATUS: "list",
        FaultKind.MISSING_COMPANIES: "batch_read",
        FaultKind.PARTIAL_FAILURE: BATCH_WRITE_ENDPOINTS,
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
        morpheus_properties: bool | None = None,
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
        self._contacts: dict[str, dict[str, Any]] = {}
        self._owners: list[dict[str, Any]] = []
        self._engagements: dict[str, dict[str, dict[str, Any]]] = {}
        self._deals: dict[str, dict[str, Any]] = {}
        self._properties: dict[str, dict[str, dict[str, Any]]] = {}
        self._associations: dict[tuple[str, str], dict[str, set[str]]] = {}
        self._next_object_id = 70_000_001
        self._limiter: RollingWindowLimiter | None = None
        self.load(data)
        if morpheus_properties is not None:
            self.set_morpheus_properties(morpheus_properties)
        configured = data.get("rate_limit") or {}
        if rate_limit is None and configured:
            rate_limit = int(configured["max_requests"])
            rate_limit_interval_s = float(configured.get("interval_s", rate_limit_interval_s))
        self.set_rate_limit(rate_limit, rate_limit_interval_s)

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> Self:
        """Build an emulator from a JSON data file (kwargs as for the constructor)."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), **kwargs)

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
            if m := _PROPERTY_RE.match(path):
                return "property_read", {"object_type": m.group(1), "name": m.group(2)}
            if m := _LIST_BY_NAME_RE.match(path):
                return "list_by_name", {
                    "object_type_id": unquote(m.group(1)),
                    "list_name": unquote(m.group(2)),
                }
        if method == "POST" and path.rstrip("/") == _BATCH_READ_PATH:
            return "batch_read", {}
        if method == "POST" and path.rstrip("/") == _CONTACTS_BATCH_UPDATE_PATH:
            return "contacts_batch_update", {}
        if method == "POST" and path.rstrip("/") == _CONTACTS_BATCH_READ_PATH:
            return "contacts_batch_read", {}
        if method == "PUT" and (m := _MEMBERSHIPS_ADD_RE.match(path)):
            return "memberships_add", {"list_id": m.group(1)}
        if (
            method == "POST"
            and (m := _SEARCH_RE.match(path))
            and (searched := _SEARCH_ENDPOINTS.get(object_type(m.group(1))))
        ):
            return searched, {"object_type": m.group(1)}
        if method == "POST" and _DEALS_BATCH_READ_RE.match(path):
            return "deals_batch_read", {}
        if (
            method == "POST"
            and (m := _ASSOCIATIONS_RE.match(path))
            and object_type(m.group(1)) in _ASSOCIATED_TYPES
        ):
            return "associations_batch_read", {"object_type": m.group(1)}
        if method == "POST" and (m := _UPSERT_RE.match(path)):
            return f"{m.group(1)}_batch_upsert", {"object_type": m.group(1)}
        if method == "POST" and (m := _ASSOCIATE_DEFAULT_RE.match(path)):
            return "associations_associate_default", {
                "from_type": m.group(1),
                "to_type": m.group(2),
            }
        if method == "POST" and path.rstrip("/") == _LISTS_PATH:
            return "lists_create", {}
        if method == "PUT" and (m := _MEMBERSHIPS_CHANGE_RE.match(path)):
            return "memberships_add_and_remove", {"list_id": m.group(1)}
        if method == "DELETE" and (m := _MEMBERSHIPS_RE.match(path)):
            return "memberships_clear", {"list_id": m.group(1)}
        if method == "POST" and (m := _PROPERTIES_RE.match(path)):
            return "properties_create", {"object_type": m.group(1)}
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

    def handle(self, request: Request, fault: Fault | None) -> Response:
        """Dispatch to the endpoint handlers."""
        handler = {
            "list": self._handle_list,
            "memberships": self._handle_memberships,
            "memberships_add": self._handle_memberships_add,
            "batch_read": self._handle_batch_read,
            "contacts_batch_update": self._handle_contacts_batch_update,
            "contacts_batch_read": self._handle_contacts_batch_read,
            "owners": self._handle_owners,
            "engagements_search": self._handle_search,
            "associations_batch_read": self._handle_associations_batch_read,
            "contacts_search": self._handle_search,
            "deals_search": self._handle_search,
            "deals_batch_read": self._handle_deals_batch_read,
            **dict.fromkeys((f"{t}_batch_upsert" for t in UPSERT_TYPES), self._handle_batch_upsert),
            "associations_associate_default": self._handle_associate_default,
            "lists_create": self._handle_list_create,
            "list_by_name": self._handle_list_by_name,
            "memberships_add_and_remove": self._handle_memberships_add_and_remove,
            "memberships_clear": self._handle_memberships_clear,
            "properties_create": self._handle_properties_create,
            "property_read": self._handle_property_read,
        }[request.endpoint]
        try:
            return handler(request, fault)
        except _BadRequest as exc:
            return Response(400, self.error_body(400, str(exc)))


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
