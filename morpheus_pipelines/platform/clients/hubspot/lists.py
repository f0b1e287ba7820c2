"""Lists: the target-account list and its memberships read, records enrolled (docs/pipeline.md,
docs/ownership.md), and the contact lists Morpheus keeps: found or created by name, members
added and removed, emptied."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from morpheus_pipelines.platform.clients.hubspot.transport import HubSpotError, HubSpotTransport

MEMBERSHIP_PAGE_SIZE = 250
# Record ids HubSpot takes in one add-and-remove request (adds and removes together).
MEMBERSHIP_CHANGE_SIZE = 100_000
CONTACT_OBJECT_TYPE_ID = "0-1"
# Lists whose members an API call may change (DYNAMIC lists follow their filters).
_WRITABLE_PROCESSING_TYPES = ("MANUAL", "SNAPSHOT")


@dataclass(frozen=True)
class ListMembershipChange:
    """A membership change as HubSpot answered it: records added, removed, and those it does
    not know (HubSpot ignores adding a member or removing a non-member)."""

    added_ids: list[str]
    missing_ids: list[str]
    removed_ids: list[str] = field(default_factory=list)


def _membership_change(body: Any, endpoint: str) -> ListMembershipChange:
    if not isinstance(body, dict):
        raise HubSpotError(f"{endpoint} response is not an object", endpoint=endpoint)
    # The spec spells it recordsIdsAdded; HubSpot's documentation examples recordIdsAdded.
    added = body.get("recordsIdsAdded", body.get("recordIdsAdded")) or []
    return ListMembershipChange(
        added_ids=[str(i) for i in added],
        missing_ids=[str(i) for i in body.get("recordIdsMissing") or []],
        removed_ids=[str(i) for i in body.get("recordIdsRemoved") or []],
    )


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
        return _membership_change(body, "memberships_add")

    def _contact_list_named(self, name: str) -> str | None:
        """The id of the contact list called ``name``, None when there is none; a list of that
        name whose members cannot be changed is an error, not a list to use."""
        endpoint = "list_by_name"
        path = f"/crm/v3/lists/object-type-id/{CONTACT_OBJECT_TYPE_ID}/name/{quote(name, safe='')}"
        try:
            _, body = self.request("GET", path, endpoint=endpoint)
        except HubSpotError as exc:
            if exc.status == 404:
                return None
            raise
        listing = body.get("list") if isinstance(body, dict) else None
        if not isinstance(listing, dict) or not listing.get("listId"):
            raise HubSpotError("HubSpot list response has no 'list' object", endpoint=endpoint)
        if listing.get("processingType") not in _WRITABLE_PROCESSING_TYPES:
            raise HubSpotError(
                f"HubSpot list {listing['listId']} ({name!r}) is "
                f"{listing.get('processingType')}: its members cannot be set by Morpheus; "
                "rename or delete it in HubSpot",
                endpoint=endpoint,
            )
        return str(listing["listId"])

    def ensure_contact_list(self, name: str) -> str:
        """The id of the MANUAL contact list called ``name``, created when there is none
        (``POST /crm/v3/lists``); calling it again returns the same list. A creation whose
        answer was lost, or that raced another, is resolved by looking the name up again."""
        if not name.strip():
            raise ValueError("a contact list needs a name")
        found = self._contact_list_named(name)
        if found is not None:
            return found
        endpoint = "lists_create"
        payload = {
            "name": name,
            "objectTypeId": CONTACT_OBJECT_TYPE_ID,
            "processingType": "MANUAL",
        }
        try:
            _, body = self.request("POST", "/crm/v3/lists", endpoint=endpoint, json=payload)
        except HubSpotError as exc:
            # HubSpot refuses a name that exists: the list was made meanwhile (by a retried
            # request whose answer was lost, or by another run).
            if exc.status not in (400, 409) or (found := self._contact_list_named(name)) is None:
                raise
            return found
        listing = body.get("list") if isinstance(body, dict) else None
        if not isinstance(listing, dict) or not listing.get("listId"):
            raise HubSpotError("HubSpot list response has no 'list' object", endpoint=endpoint)
        return str(listing["listId"])

    def change_list_members(
        self, list_id: str, add: Sequence[str], remove: Sequence[str]
    ) -> ListMembershipChange:
        """Add and remove contacts (``PUT /crm/v3/lists/{listId}/memberships/add-and-remove``),
        in requests of at most 100,000 ids; adding a member or removing a non-member changes
        nothing, so a retried change is harmless."""
        adds = list(dict.fromkeys(str(i) for i in add))
        removes = list(dict.fromkeys(str(i) for i in remove))
        if both := set(adds) & set(removes):
            raise ValueError(f"{len(both)} record(s) are both to be added and removed")
        endpoint = "memberships_add_and_remove"
        path = f"/crm/v3/lists/{list_id}/memberships/add-and-remove"
        added: list[str] = []
        missing: list[str] = []
        removed: list[str] = []
        pending = [(True, i) for i in adds] + [(False, i) for i in removes]
        for start in range(0, len(pending), MEMBERSHIP_CHANGE_SIZE):
            chunk = pending[start : start + MEMBERSHIP_CHANGE_SIZE]
            payload = {
                "recordIdsToAdd": [i for to_add, i in chunk if to_add],
                "recordIdsToRemove": [i for to_add, i in chunk if not to_add],
            }
            _, body = self.request("PUT", path, endpoint=endpoint, json=payload)
            change = _membership_change(body, endpoint)
            added += change.added_ids
            missing += change.missing_ids
            removed += change.removed_ids
        return ListMembershipChange(added_ids=added, missing_ids=missing, removed_ids=removed)

    def clear_list(self, list_id: str) -> None:
        """Remove every member of a list, keeping the list
        (``DELETE /crm/v3/lists/{listId}/memberships``; HubSpot does this for lists of fewer
        than 100,000 members)."""
        self.request("DELETE", f"/crm/v3/lists/{list_id}/memberships", endpoint="memberships_clear")
