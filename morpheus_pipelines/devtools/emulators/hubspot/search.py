"""The CRM object search every type of the emulator shares
(``POST /crm/v3/objects/{type}/search``): contacts, deals and the engagements (calls, emails,
meetings, notes, tasks).

A type is named in a path as HubSpot names it (``deals``, ``contacts``, ``calls``) or by its
object type id (``0-3``, ``0-1``, ``0-48``), as HubSpot's own OpenAPI files spell the paths.

The search keeps HubSpot's limits: at most 200 results a page, and no paging past the
10,000th result of one query (a client syncing a busy portal must move its watermark, not
page forever). It filters on the type's modification time only (``hs_lastmodifieddate``;
``lastmodifieddate`` for contacts) and always answers oldest modification first.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .._faults import Fault
from .._messages import Request, Response
from .params import _BadRequest
from .portal import OBJECT_TYPE_IDS, Portal

MAX_SEARCH_PAGE = 200
MAX_SEARCH_RESULTS = 10_000
# HubSpot's object type ids, accepted in a path wherever the type's name is.
_TYPE_NAMES = {type_id: name for name, type_id in OBJECT_TYPE_IDS.items()}
# The property a type's search filters and sorts on: when the record last changed.
MODIFIED_PROPERTY = {"contacts": "lastmodifieddate"}
DEFAULT_MODIFIED_PROPERTY = "hs_lastmodifieddate"
_OPERATORS = {
    "GTE": lambda a, b: a >= b,
    "GT": lambda a, b: a > b,
    "LTE": lambda a, b: a <= b,
    "LT": lambda a, b: a < b,
    "EQ": lambda a, b: a == b,
}


def object_type(name: str) -> str:
    """The type's name for a name or an object type id (``0-3`` → ``deals``)."""
    return _TYPE_NAMES.get(name, name)


def modified_property(object_type_name: str) -> str:
    return MODIFIED_PROPERTY.get(object_type_name, DEFAULT_MODIFIED_PROPERTY)


def millis(value: Any) -> int:
    """HubSpot takes a date filter as epoch milliseconds or as an ISO 8601 string."""
    return _text_millis(str(value))


@functools.lru_cache(maxsize=65_536)
def _text_millis(text: str) -> int:
    # Cached: every search parses every stored modification time again.
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise _BadRequest(f"cannot parse date value {text!r}") from exc
    return int(moment.astimezone(UTC).timestamp() * 1000)


@dataclass(frozen=True)
class SearchQuery:
    """A search request's filter groups (OR of ANDs), properties, page size and offset."""

    filter_groups: list[list[dict[str, Any]]]
    properties: list[str]
    limit: int
    after: int


def _sort_is_ascending(sort: Any, modified: str) -> bool:
    if isinstance(sort, str):
        return sort == modified
    return (
        isinstance(sort, dict)
        and sort.get("propertyName") == modified
        and sort.get("direction", "ASCENDING") == "ASCENDING"
    )


def search_query(request: Request, modified: str) -> SearchQuery:
    """The search body (contacts.json's ``PublicObjectSearchRequest``, which every object's
    search shares), or 400 for what the emulator does not do."""
    try:
        payload = request.json
    except ValueError as exc:
        raise _BadRequest(f"Invalid input JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise _BadRequest("Invalid input JSON: expected an object")
    groups = payload.get("filterGroups") or []
    if not isinstance(groups, list) or len(groups) > 5:
        raise _BadRequest("filterGroups must be an array of at most 5 groups")
    filter_groups = []
    for group in groups:
        group_filters = group.get("filters") if isinstance(group, dict) else None
        if not isinstance(group_filters, list):
            raise _BadRequest("every filter group needs a 'filters' array")
        for item in group_filters:
            if not isinstance(item, dict) or item.get("propertyName") != modified:
                raise _BadRequest(f"the emulator filters on {modified} only")
            if item.get("operator") not in _OPERATORS:
                raise _BadRequest(f"operator {item.get('operator')!r} is not supported")
            millis(item.get("value"))
        filter_groups.append(group_filters)
    sorts = payload.get("sorts") or []
    if not isinstance(sorts, list) or not all(_sort_is_ascending(s, modified) for s in sorts):
        raise _BadRequest(f"the emulator sorts on {modified} ascending only")
    limit = payload.get("limit", 10)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_SEARCH_PAGE:
        raise _BadRequest(f"limit must be between 1 and {MAX_SEARCH_PAGE}")
    after = str(payload.get("after") or "0")
    if not after.isdigit():
        raise _BadRequest(f"after must be a number, got {after!r}")
    if int(after) + limit > MAX_SEARCH_RESULTS:
        raise _BadRequest(
            f"paging past {MAX_SEARCH_RESULTS} results is not allowed; narrow the filter"
        )
    properties = payload.get("properties") or []
    return SearchQuery(filter_groups, [str(p) for p in properties], limit, int(after))


def _modified_at(record: Mapping[str, Any], modified: str) -> str:
    # A record stored without the property (a test's raw data) changed when it was updated.
    return record["properties"].get(modified) or record.get("updatedAt") or record["createdAt"]


def search_answer(
    records: Iterable[tuple[str, Mapping[str, Any]]], modified: str, query: SearchQuery
) -> Response:
    """One page of ``CollectionResponseWithTotalSimplePublicObject`` over ``records`` (id,
    record with ``properties`` and ``createdAt``): the matches, oldest modification first
    (then by id), from ``query.after``."""
    bounds = [
        [(_OPERATORS[f["operator"]], millis(f["value"])) for f in group]
        for group in query.filter_groups
    ]
    keyed = ((millis(_modified_at(record, modified)), i, record) for i, record in records)
    found = sorted(
        (moment, int(record_id) if record_id.isdigit() else 0, record_id, record)
        for moment, record_id, record in keyed
        if not bounds or any(all(op(moment, value) for op, value in g) for g in bounds)
    )
    wanted = list(dict.fromkeys([*query.properties, "hs_object_id", modified]))
    results = [
        {
            "id": record_id,
            "properties": {name: record["properties"].get(name) for name in wanted}
            | {"hs_object_id": record_id, modified: _modified_at(record, modified)},
            "createdAt": record["createdAt"],
            "updatedAt": _modified_at(record, modified),
            "archived": False,
        }
        for _, _, record_id, record in found[query.after : query.after + query.limit]
    ]
    body: dict[str, Any] = {"total": len(found), "results": results}
    if query.after + query.limit < len(found):
        body["paging"] = {"next": {"after": str(query.after + query.limit)}}
    return Response(200, body)


class SearchEndpoints(Portal):
    """The search of contacts, deals and engagements (endpoints ``contacts_search``,
    ``deals_search`` and ``engagements_search``)."""

    def _handle_search(self, request: Request, fault: Fault | None) -> Response:
        searched = object_type(request.params["object_type"])
        modified = modified_property(searched)
        query = search_query(request, modified)
        with self._lock:
            return search_answer(self._records_of(searched).items(), modified, query)
