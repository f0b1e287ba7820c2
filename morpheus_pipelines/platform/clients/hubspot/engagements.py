"""Engagements (calls, emails, meetings, notes): searched by modification time, and the
contacts each is associated with (the engagement sync). The search by modification time is
shared with the tasks (``tasks``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.objects import BATCH_READ_SIZE
from morpheus_pipelines.platform.clients.hubspot.transport import (
    HubSpotError,
    HubSpotTransport,
    results_of,
)

SEARCH_PAGE_SIZE = 100
# HubSpot's search refuses to page past 10,000 results of one query; the engagement sync
# starts a new query from the last modification time it saw before it gets there.
SEARCH_RESULT_CAP = 10_000


def _modified_ms(engagement: dict[str, Any]) -> int:
    value = str((engagement.get("properties") or {}).get("hs_lastmodifieddate") or "0")
    if value.isdigit():
        return int(value)
    return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)


def _search(since: int, after: int, properties: Sequence[str], limit: int) -> dict[str, Any]:
    """The search body: modified at or after ``since`` (ms), oldest first, from ``after``."""
    modified_since = {"propertyName": "hs_lastmodifieddate", "operator": "GTE", "value": str(since)}
    return {
        "filterGroups": [{"filters": [modified_since]}],
        "sorts": ["hs_lastmodifieddate"],  # ascending; the spec types a sort as a string
        "properties": [*properties, "hs_lastmodifieddate"],
        "limit": limit,
        "after": str(after),
    }


class ModifiedSinceSearch(HubSpotTransport):
    """``POST /crm/v3/objects/{type}/search`` for the records modified since a moment, oldest
    modification first, past HubSpot's 10,000-result cap."""

    def _iter_modified_since(
        self,
        object_type: str,
        endpoint: str,
        *,
        modified_since_ms: int,
        properties: Sequence[str],
        limit: int = SEARCH_PAGE_SIZE,
    ) -> Iterator[list[dict[str, Any]]]:
        # Paged by key, not by offset: each page starts a new query at the last modification
        # time seen. A record edited during the run moves to the end of the order, and with
        # offsets the row behind it would slide into a page already read and be lost; this
        # way rows come again at worst (the caller's upsert absorbs repeats). Only rows
        # sharing one modification time are paged by offset.
        since, after = modified_since_ms, 0
        path = f"/crm/v3/objects/{object_type}/search"
        while True:
            payload = _search(since, after, properties, limit)
            _, body = self.request("POST", path, endpoint=endpoint, json=payload)
            results = results_of(body, "search response has no 'results' list", endpoint=endpoint)
            if results:
                yield results
            more = ((body.get("paging") or {}).get("next") or {}).get("after")
            if not more or not results:
                return
            last = _modified_ms(results[-1])
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


class EngagementEndpoints(ModifiedSinceSearch):
    """The engagement search and the engagements' contact associations."""

    def iter_engagement_pages(
        self,
        object_type: str,
        *,
        modified_since_ms: int,
        properties: Sequence[str],
        limit: int = SEARCH_PAGE_SIZE,
    ) -> Iterator[list[dict[str, Any]]]:
        """Every engagement of ``object_type`` (calls, emails, meetings, notes) modified at or
        after ``modified_since_ms``, oldest modification first, through
        ``POST /crm/v3/objects/{type}/search``. Past HubSpot's 10,000-result cap of one query
        a new query starts from the last modification time seen (its rows come again; the
        caller's upsert absorbs them)."""
        return self._iter_modified_since(
            object_type,
            "engagements_search",
            modified_since_ms=modified_since_ms,
            properties=properties,
            limit=limit,
        )

    def read_engagement_contacts(
        self, object_type: str, engagement_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """The contacts each of ≤ 100 engagements is associated with
        (``POST /crm/v4/associations/{type}/contacts/batch/read``)."""
        if len(engagement_ids) > BATCH_READ_SIZE:
            raise ValueError(f"associations batch/read takes at most {BATCH_READ_SIZE} ids")
        endpoint = "associations_batch_read"
        _, body = self.request(
            "POST",
            f"/crm/v4/associations/{object_type}/contacts/batch/read",
            endpoint=endpoint,
            json={"inputs": [{"id": str(i)} for i in engagement_ids]},
        )
        results = results_of(body, "associations response has no 'results' list", endpoint=endpoint)
        return {
            str(item["from"]["id"]): [str(to["toObjectId"]) for to in item.get("to") or ()]
            for item in results
            if isinstance(item, dict) and isinstance(item.get("from"), dict)
        }
