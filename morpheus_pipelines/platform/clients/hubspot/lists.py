"""Lists: the target-account list and its memberships read, records enrolled (docs/pipeline.md,
docs/ownership.md)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.transport import HubSpotError, HubSpotTransport

MEMBERSHIP_PAGE_SIZE = 250


@dataclass(frozen=True)
class ListMembershipChange:
    """One ``memberships/add`` answer (HubSpot ignores records already on the list)."""

    added_ids: list[str]
    missing_ids: list[str]


class ListEndpoints(HubSpotTransport):
    """The list endpoints."""

    def get_list(self, list_id: str) -> dict[str, Any]:
        """``GET /crm/v3/lists/{listId}``; HubSpot wraps the list in ``{"list": …}``."""
        _, body = self.request("GET", f"/crm/v3/lists/{list_id}", endpoint="list")
        listing = body.get("list") if isinstance(body, dict) else None
        if not isinstance(listing, dict):
            raise HubSpotError("HubSpot list response has no 'list' object", endpoint="list")
        return listing

    def iter_membership_pages(
        self, list_id: str, *, limit: int = MEMBERSHIP_PAGE_SIZE
    ) -> Iterator[list[dict[str, Any]]]:
        """Every page of ``GET /crm/v3/lists/{listId}/memberships``, following ``after``."""
        return self._iter_pages(
            f"/crm/v3/lists/{list_id}/memberships", endpoint="memberships", params={"limit": limit}
        )

    def add_list_members(self, list_id: str, record_ids: Sequence[str]) -> ListMembershipChange:
        """``PUT /crm/v3/lists/{listId}/memberships/add``; records already on the list are
        ignored by HubSpot, so adding twice enrols once."""
        _, body = self.request(
            "PUT",
            f"/crm/v3/lists/{list_id}/memberships/add",
            endpoint="memberships_add",
            json=[str(i) for i in record_ids],
        )
        if not isinstance(body, dict):
            raise HubSpotError(
                "memberships/add response is not an object", endpoint="memberships_add"
            )
        return ListMembershipChange(
            added_ids=[str(i) for i in body.get("recordsIdsAdded") or []],
            missing_ids=[str(i) for i in body.get("recordIdsMissing") or []],
        )
