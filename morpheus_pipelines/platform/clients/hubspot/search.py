"""The CRM object search by modification time (``POST /crm/v3/objects/{type}/search``), which
every object type's sync shares: the engagement sync, the task completion sync, and the
reconciliation's contacts and deals.

Paged by key, not by offset: each page starts a new query at the last modification time seen.
A record edited during the run moves to the end of the order, and with offsets the record
behind it would slide into a page already read and be lost; this way records come again at
worst (the callers' writes absorb repeats). Only records sharing one modification time are
paged by offset, and past HubSpot's 10,000-result cap of one query that is an error, not a
silent stop.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.transport import (
    HubSpotError,
    HubSpotTransport,
    results_of,
)

SEARCH_PAGE_SIZE = 100
# HubSpot's search refuses to page past 10,000 results of one query; the search starts a new
# query from the last modification time it saw before it gets there.
SEARCH_RESULT_CAP = 10_000


def hubspot_millis(value: Any) -> int:
    """A HubSpot timestamp (epoch milliseconds, or ISO 8601 with ``Z``) in epoch ms."""
    text = str(value or "0")
    if text.isdigit():
        return int(text)
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def since_millis(since: datetime) -> int:
    """``since`` in epoch ms; a naive time is refused (it would be read in the local zone)."""
    if since.tzinfo is None or since.utcoffset() is None:
        raise ValueError(f"since must be timezone-aware, got {since.isoformat()}")
    return int(since.timestamp() * 1000)


def _search(
    modified: str, since: int, after: int, properties: Sequence[str], limit: int
) -> dict[str, Any]:
    """The search body: modified at or after ``since`` (ms), oldest first, from ``after``."""
    modified_since = {"propertyName": modified, "operator": "GTE", "value": str(since)}
    return {
        "filterGroups": [{"filters": [modified_since]}],
        "sorts": [modified],  # ascending; the spec types a sort as a string
        "properties": list(dict.fromkeys([*properties, modified])),
        "limit": limit,
        "after": str(after),
    }


class ObjectSearch(HubSpotTransport):
    """Every record of a type modified since a time, page by page."""

    def _iter_modified_since(
        self,
        object_type: str,
        *,
        modified_property: str,
        since_ms: int,
        properties: Sequence[str],
        endpoint: str,
        limit: int = SEARCH_PAGE_SIZE,
    ) -> Iterator[list[dict[str, Any]]]:
        """Pages of the ``object_type`` records whose ``modified_property`` is at or after
        ``since_ms``, oldest first; each page carries that property."""
        since, after = since_ms, 0
        path = f"/crm/v3/objects/{object_type}/search"
        while True:
            payload = _search(modified_property, since, after, properties, limit)
            _, body = self.request("POST", path, endpoint=endpoint, json=payload)
            results = results_of(body, "search response has no 'results' list", endpoint=endpoint)
            if results:
                yield results
            more = ((body.get("paging") or {}).get("next") or {}).get("after")
            if not more or not results:
                return
            last = hubspot_millis((results[-1].get("properties") or {}).get(modified_property))
            if last > since:
                since, after = last, 0
                continue
            after += limit  # a whole page shared one modification time
            if after + limit > SEARCH_RESULT_CAP:
                raise HubSpotError(
                    f"more than {SEARCH_RESULT_CAP} {object_type} share one modification "
                    "time; the search cannot page through them",
                    endpoint=endpoint,
                )
