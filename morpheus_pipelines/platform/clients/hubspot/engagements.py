"""Engagements (calls, emails, meetings, notes): searched by modification time, and the
contacts each is associated with (the engagement sync)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.associations import AssociationReads
from morpheus_pipelines.platform.clients.hubspot.search import SEARCH_PAGE_SIZE, ObjectSearch


class EngagementEndpoints(AssociationReads, ObjectSearch):
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
            modified_property="hs_lastmodifieddate",
            since_ms=modified_since_ms,
            properties=properties,
            endpoint="engagements_search",
            limit=limit,
        )

    def read_engagement_contacts(
        self, object_type: str, engagement_ids: Sequence[str]
    ) -> dict[str, list[str]]:
        """The contacts each of ≤ 100 engagements is associated with
        (``POST /crm/v4/associations/{type}/contacts/batch/read``)."""
        return self._read_associated_contacts(object_type, engagement_ids)
