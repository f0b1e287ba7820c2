"""Owners: HubSpot's users a record can be assigned to, mirrored as the sales reps
(docs/ownership.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.transport import HubSpotTransport

OWNERS_PAGE_SIZE = 500


class OwnerEndpoints(HubSpotTransport):
    """The owner endpoints."""

    def iter_owner_pages(
        self, *, archived: bool, limit: int = OWNERS_PAGE_SIZE
    ) -> Iterator[list[dict[str, Any]]]:
        """Every page of ``GET /crm/v3/owners`` (active or archived owners), following
        ``after`` to the end."""
        return self._iter_pages(
            "/crm/v3/owners",
            endpoint="owners",
            params={"limit": limit, "archived": str(archived).lower()},
        )
