"""The re-engagement segments' members read from HubSpot (docs/ownership.md, "Where segment
members come from").

Each segment of a subscription may be fed by one HubSpot contact list
(``reengagement_segment_lists``, set with ``morpheus segment set``). For each such list:

1. ``GET /crm/v3/lists/{listId}``: the list must exist, be a contact list (``0-1``) and be
   ``COMPLETE`` (a list still processing would page a partial membership);
2. every memberships page is read to completion, then the members' properties in batches of
   ≤ 100; a HubSpot failure on the way writes nothing for that list;
3. one transaction upserts the contacts (per subscription and HubSpot id, never overwriting a
   stored value with a blank), adds a member for each contact newly on the list and marks
   members no longer on it (``leftListAt``: kept, never claimed). A contact is a member of a
   segment once (``sourceEventId`` ``hubspot-contact:<id>``), so a member already processed
   is never enrolled again, whatever the list does.

Members written by events (a dialer webhook, ``hubspotListId`` NULL) are not touched.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from morpheus_pipelines.crm.rules.ownership import ReengagementSegment
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import (
    BATCH_READ_SIZE,
    MEMBERSHIP_PAGE_SIZE,
    HubSpotClient,
    HubSpotError,
)
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.text.contact_data import phone_as_recorded
from morpheus_pipelines.platform.text.normalise import normalise_email

CONTACT_LIST_OBJECT_TYPE = "0-1"
SOURCE_PREFIX = "hubspot-contact:"
COMPLETE = "COMPLETE"


class NotAContactList(ValueError):
    """A segment is configured with a list of something other than contacts."""


class ListNotReady(RuntimeError):
    """HubSpot is still computing the list's membership."""


@dataclass
class SegmentListRead:
    """What reading one segment's list did (all zero when it failed: nothing was written)."""

    segment: str
    list_id: str
    read: int = 0  # distinct members on the list
    new: int = 0
    back: int = 0  # members who had left the list and are on it again
    left: int = 0
    unchanged: int = 0
    unknown_contacts: int = 0  # on the list, but HubSpot's batch read does not know them
    contacts_upserted: int = 0
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.error is None

    def counts(self) -> dict[str, int]:
        return {
            "read": self.read,
            "new": self.new,
            "back": self.back,
            "left": self.left,
            "unchanged": self.unchanged,
            "unknown_contacts": self.unknown_contacts,
            "contacts_upserted": self.contacts_upserted,
        }


@dataclass
class SegmentListsRun:
    subscription_id: uuid.UUID
    lists: list[SegmentListRead] = field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        return all(r.succeeded for r in self.lists)

    @property
    def failed(self) -> dict[str, str]:
        """Segment → error, for the lists not read."""
        return {r.segment: r.error for r in self.lists if r.error is not None}


def read_segment_lists(
    client: HubSpotClient,
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    page_size: int = MEMBERSHIP_PAGE_SIZE,
) -> SegmentListsRun:
    """Read every configured segment list of the subscription and apply it (one transaction
    per list). A list that fails is reported with its reason; the others still apply."""
    with session_factory() as session:
        configured = CrmStore.segment_lists.lists_of(session, subscription_id)
    run = SegmentListsRun(subscription_id)
    for segment, list_id in sorted(configured.items()):
        result = SegmentListRead(segment=segment, list_id=list_id)
        try:
            members, contacts = _read_list(client, segment, list_id, page_size)
        except (HubSpotError, NotAContactList, ListNotReady) as exc:
            result.error = str(exc)
            log_event(
                "segment_list_read_failed",
                subscription_id=str(subscription_id),
                segment=segment,
                list_id=list_id,
                error=result.error,
            )
        else:
            _apply(session_factory, subscription_id, result, members, contacts)
        run.lists.append(result)
    return run


def _read_list(
    client: HubSpotClient, segment: str, list_id: str, page_size: int
) -> tuple[dict[str, str | None], dict[str, dict[str, str | None]]]:
    """(member id → membership timestamp, contact id → properties), read to completion."""
    listing = client.get_list(list_id)
    object_type = str(listing.get("objectTypeId") or "")
    if object_type != CONTACT_LIST_OBJECT_TYPE:
        raise NotAContactList(
            f"segment {segment!r} is fed by HubSpot list {list_id} "
            f"({listing.get('name') or 'unnamed'}), whose objectTypeId is {object_type or '?'}, "
            f"not a contact list ({CONTACT_LIST_OBJECT_TYPE}); point the segment at a contact "
            "list with `morpheus segment set`"
        )
    status = listing.get("processingStatus")
    if status is not None and status != COMPLETE:
        # A list still being processed pages a partial membership: its absentees would be
        # marked as having left.
        raise ListNotReady(
            f"segment {segment!r}: HubSpot list {list_id} is {status}, not {COMPLETE}; "
            "it is read again on the next run"
        )
    members: dict[str, str | None] = {}
    for page in client.iter_membership_pages(list_id, limit=page_size):
        for row in page:
            if isinstance(row, dict) and row.get("recordId") is not None:
                # A record repeated across pages is one member.
                members.setdefault(str(row["recordId"]), row.get("membershipTimestamp"))
    ids = list(members)
    contacts: dict[str, dict[str, str | None]] = {}
    for start in range(0, len(ids), BATCH_READ_SIZE):
        contacts.update(client.read_contacts(ids[start : start + BATCH_READ_SIZE]))
    return members, contacts


def _contact_values(properties: dict[str, str | None], region: str | None) -> dict[str, Any]:
    """The contact's columns, its email and phone in the forms intake stores, so a lead and
    the HubSpot contact it became are one person."""
    return {
        "email": normalise_email(properties.get("email")),
        "phone": phone_as_recorded(properties.get("phone"), region),
        "hubspotOwnerId": properties.get("hubspot_owner_id"),
        "callAssignedTo": properties.get("call_assigned_to"),
    }


def _entered_at(timestamp: str | None) -> datetime | None:
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp)
    except ValueError:
        return None


def _apply(
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    result: SegmentListRead,
    members: dict[str, str | None],
    contacts: dict[str, dict[str, str | None]],
) -> None:
    segment = ReengagementSegment(result.segment)
    now = datetime.now(UTC)
    result.read = len(members)
    with session_factory() as session:
        store = CrmStore(session)
        region = store.subscriptions.default_region(session, subscription_id)
        known = store.members.list_members(session, subscription_id, segment)
        rows: list[dict[str, Any]] = []
        back: list[int] = []
        on_list: set[str] = set()
        for hubspot_id, timestamp in members.items():
            properties = contacts.get(hubspot_id)
            if properties is None:
                result.unknown_contacts += 1
                continue
            contact, written = store.contacts.upsert_from_hubspot(
                session, subscription_id, hubspot_id, _contact_values(properties, region)
            )
            result.contacts_upserted += int(written)
            source = SOURCE_PREFIX + hubspot_id
            on_list.add(source)
            member = known.get(source)
            if member is None:
                row: dict[str, Any] = {
                    "subscriptionId": subscription_id,
                    "segment": segment,
                    "sourceEventId": source,
                    "contactId": contact.id,
                    "hubspotListId": result.list_id,
                }
                if (entered := _entered_at(timestamp)) is not None:
                    row["enteredAt"] = entered
                rows.append(row)
            elif member.left:
                back.append(member.member_id)
            else:
                result.unchanged += 1
        result.new = store.members.add_members(session, rows)
        result.back = store.members.mark_back(session, back, result.list_id)
        gone = [m.member_id for s, m in known.items() if s not in on_list and not m.left]
        result.left = store.members.mark_left(session, gone, now)
