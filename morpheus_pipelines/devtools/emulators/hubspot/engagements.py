"""Engagements: ``POST /crm/v3/objects/{calls|emails|meetings|notes|tasks}/search`` filtered and
sorted on ``hs_lastmodifieddate``, and ``POST /crm/v4/associations/{type}/contacts/batch/read``
for the contacts each one is about (read from the portal's associations).

The search keeps HubSpot's limits: at most 200 results a page, and no paging past the
10,000th result of one query (a client syncing a busy portal must move its watermark, not
page forever)."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from .._faults import Fault
from .._messages import Request, Response, iso_now
from .params import MAX_BATCH_INPUTS, _BadRequest, _sort_key
from .portal import Portal

ENGAGEMENT_TYPES = ("calls", "emails", "meetings", "notes", "tasks")
MAX_SEARCH_PAGE = 200
MAX_SEARCH_RESULTS = 10_000
_OPERATORS = {
    "GTE": lambda a, b: a >= b,
    "GT": lambda a, b: a > b,
    "LTE": lambda a, b: a <= b,
    "LT": lambda a, b: a < b,
    "EQ": lambda a, b: a == b,
}


def _millis(value: Any) -> int:
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


def _search_request(request: Request) -> tuple[list[list[dict]], list[str], int, int]:
    try:
        payload = request.json
    except ValueError as exc:
        raise _BadRequest(f"Invalid input JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise _BadRequest("Invalid input JSON: expected an object")
    groups = payload.get("filterGroups") or []
    if not isinstance(groups, list) or len(groups) > 5:
        raise _BadRequest("filterGroups must be an array of at most 5 groups")
    filters = []
    for group in groups:
        group_filters = group.get("filters") if isinstance(group, dict) else None
        if not isinstance(group_filters, list):
            raise _BadRequest("every filter group needs a 'filters' array")
        for item in group_filters:
            if item.get("propertyName") != "hs_lastmodifieddate":
                raise _BadRequest("the emulator filters on hs_lastmodifieddate only")
            if item.get("operator") not in _OPERATORS:
                raise _BadRequest(f"operator {item.get('operator')!r} is not supported")
        filters.append(group_filters)
    limit = payload.get("limit", 10)
    if not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_PAGE:
        raise _BadRequest(f"limit must be between 1 and {MAX_SEARCH_PAGE}")
    after = str(payload.get("after") or "0")
    if not after.isdigit():
        raise _BadRequest(f"after must be a number, got {after!r}")
    properties = payload.get("properties") or []
    return filters, [str(p) for p in properties], limit, int(after)


class EngagementEndpoints(Portal):
    """The ``engagements_search`` and ``associations_batch_read`` endpoints."""

    def _handle_engagements_search(self, request: Request, fault: Fault | None) -> Response:
        object_type = request.params["object_type"]
        filters, wanted, limit, offset = _search_request(request)
        if offset + limit > MAX_SEARCH_RESULTS:
            raise _BadRequest(
                f"paging past {MAX_SEARCH_RESULTS} results is not allowed; narrow the filter"
            )
        with self._lock:
            rows = list(self._engagements.get(object_type, {}).items())

        bounds = [[(_OPERATORS[f["operator"]], _millis(f["value"])) for f in g] for g in filters]
        keyed = [(_millis(e["properties"]["hs_lastmodifieddate"]), int(i), i, e) for i, e in rows]
        found = sorted(
            row
            for row in keyed
            if not bounds or any(all(op(row[0], value) for op, value in g) for g in bounds)
        )
        page = found[offset : offset + limit]
        results = [
            {
                "id": engagement_id,
                "properties": {
                    name: engagement["properties"].get(name)
                    for name in dict.fromkeys([*wanted, "hs_object_id", "hs_lastmodifieddate"])
                }
                | {"hs_object_id": engagement_id},
                "createdAt": engagement["createdAt"],
                "updatedAt": engagement["properties"]["hs_lastmodifieddate"],
                "archived": False,
            }
            for _, _, engagement_id, engagement in page
        ]
        body: dict[str, Any] = {"total": len(found), "results": results}
        if offset + limit < len(found):
            body["paging"] = {"next": {"after": str(offset + limit)}}
        return Response(200, body)

    def _handle_associations_batch_read(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        from_type = request.params["object_type"]
        try:
            inputs = request.json.get("inputs")
        except (ValueError, AttributeError) as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(inputs, list) or len(inputs) > MAX_BATCH_INPUTS:
            raise _BadRequest(f"'inputs' must be an array of at most {MAX_BATCH_INPUTS}")
        results = []
        with self._lock:
            store = self._engagements.get(from_type, {})
            linked = self._associations.get((from_type, "contacts"), {})
            for item in inputs:
                engagement_id = str(item.get("id"))
                contact_ids = sorted(linked.get(engagement_id, ()), key=_sort_key)
                if engagement_id not in store or not contact_ids:
                    continue
                results.append(
                    {
                        "from": {"id": str(item["id"])},
                        "to": [
                            {
                                "toObjectId": int(contact_id),
                                "associationTypes": [
                                    {"category": "HUBSPOT_DEFINED", "typeId": 0, "label": None}
                                ],
                            }
                            for contact_id in contact_ids
                        ],
                    }
                )
        return Response(
            200,
            {
                "status": "COMPLETE",
                "results": results,
                "startedAt": started,
                "completedAt": iso_now(),
            },
        )

    def set_engagement(
        self,
        object_type: str,
        engagement_id: str | int,
        properties: dict[str, Any],
        *,
        contact_ids: Iterable[str | int] = (),
        modified_at: datetime | None = None,
    ) -> None:
        """Create or replace one engagement, modified at ``modified_at`` (now by default)."""
        if object_type not in ENGAGEMENT_TYPES:
            raise ValueError(f"object type must be one of {ENGAGEMENT_TYPES}")
        moment = (modified_at or datetime.now(UTC)).astimezone(UTC)
        stamp = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        with self._lock:
            store = self._engagements.setdefault(object_type, {})
            current = store.get(str(engagement_id), {})
            store[str(engagement_id)] = {
                "properties": {str(k): v for k, v in properties.items()}
                | {"hs_lastmodifieddate": stamp},
                "createdAt": current.get("createdAt", stamp),
                "writes": current.get("writes", 0),
            }
            self.dissociate_all(object_type, str(engagement_id), "contacts")
            for contact_id in contact_ids:
                self.associate(object_type, str(engagement_id), "contacts", str(contact_id))
