"""The ownership slice's share of the demo: a workspace and its reps' lists in the warehouse,
and in the emulated HubSpot portal the owners, contacts in every kind of ownership and one
contact list per re-engagement segment (docs/ownership.md).

The contacts and the segments' members exist only in HubSpot, as on a real portal: the demo
points each segment at its list the way ``morpheus segment set`` does, and
``reengagement_job`` reads the lists into ``contacts`` and ``reengagement_segment_members``
before it assigns them.

Deterministic and idempotent: the workspace has a fixed id, and a contact joins a segment
once whatever its list does, so a second demo finds everything processed and prints the same
assignments.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from morpheus_pipelines.crm.models import (
    AssignmentOutcome,
    ReengagementAssignment,
    ReengagementSegment,
    ReengagementSegmentMember,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.steps.portal_setup import segment_lists, set_segment_list
from morpheus_pipelines.crm.steps.segment_lists import CONTACT_LIST_OBJECT_TYPE
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import get_session

DEMO_SUBSCRIPTION_ID = uuid.UUID("6d6f7270-6865-7573-0000-00000000d3d0")
UNASSIGNED_LIST_ID = "700000"
SEGMENT_LIST_IDS: dict[ReengagementSegment, str] = {
    segment: str(720_001 + n) for n, segment in enumerate(ReengagementSegment)
}
CONTACTS = 120
ARCHIVED_OWNERS = 6  # the non-APAC sales people have left: their owners are archived
# Every tenth contact is on the next segment's list too: one follow-up, the other membership
# skipped because the first one's task is live.
ON_TWO_LISTS_EVERY = 10
_FIRST_CONTACT_ID = 880_000
_SEGMENTS = list(ReengagementSegment)
_LIFECYCLE_STAGES = {
    ReengagementSegment.EMAIL_CLICK: "marketingqualifiedlead",
    ReengagementSegment.SUPPLIER: "other",
    ReengagementSegment.NO_SHOW: "salesqualifiedlead",
    ReengagementSegment.LOST_DEAL: "opportunity",
    ReengagementSegment.CAMPAIGN_TARGET: "lead",
    ReengagementSegment.DIALER_CALL_ENDED: "lead",
}


def _rep_list_id(owner_id: str) -> str:
    return str(710_000 + int(owner_id))


def with_ownership_portal(
    data: Mapping[str, Any], owners: Sequence[Mapping[str, Any]], *, entered_at: datetime
) -> dict[str, Any]:
    """``data`` (HubSpot emulator data) with the ownership demo's portal added: ``owners``
    with the last :data:`ARCHIVED_OWNERS` archived and the AI owner, the unassigned list and
    each rep's call list, the contacts, and one contact list per segment
    (:data:`SEGMENT_LIST_IDS`) whose members entered it at ``entered_at``."""
    portal = copy.deepcopy(dict(data))
    active, archived = list(owners[:-ARCHIVED_OWNERS]), list(owners[-ARCHIVED_OWNERS:])
    portal["owners"] = [
        *({**owner, "archived": False} for owner in active),
        *({**owner, "archived": True} for owner in archived),
        {"id": DIALER_FALLBACK_HUBSPOT_OWNER_ID, "email": "ai-dialer@demo.example"},
    ]
    lists = portal.setdefault("lists", {})
    lists[UNASSIGNED_LIST_ID] = {
        "name": "Re-engagement, unassigned",
        "objectTypeId": CONTACT_LIST_OBJECT_TYPE,
    }
    for owner in owners:
        lists[_rep_list_id(owner["id"])] = {
            "name": f"{owner['email']} calls",
            "objectTypeId": CONTACT_LIST_OBJECT_TYPE,
        }
    contacts = portal.setdefault("contacts", {})
    members: dict[ReengagementSegment, list[str]] = {segment: [] for segment in _SEGMENTS}
    for i in range(CONTACTS):
        hubspot_id = str(_FIRST_CONTACT_ID + i)
        segment = _SEGMENTS[i % len(_SEGMENTS)]
        contacts[hubspot_id] = {"properties": _contact_properties(i, segment, active, archived)}
        members[segment].append(hubspot_id)
        if i % ON_TWO_LISTS_EVERY == 0:
            members[_SEGMENTS[(i + 1) % len(_SEGMENTS)]].append(hubspot_id)
    timestamp = entered_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    for segment, ids in members.items():
        lists[SEGMENT_LIST_IDS[segment]] = {
            "name": f"Re-engagement: {segment.value.replace('_', ' ')}",
            "objectTypeId": CONTACT_LIST_OBJECT_TYPE,
            "processingType": "DYNAMIC",
            "members": [{"id": i, "membershipTimestamp": timestamp} for i in ids],
        }
    return portal


def _owner_of(i: int, active: Sequence[Mapping], archived: Sequence[Mapping]) -> str | None:
    """A spread of ownership: none, the AI owner, a departed rep, an active rep."""
    kind = i % 6
    if kind == 1:
        return DIALER_FALLBACK_HUBSPOT_OWNER_ID
    if kind == 3:
        return archived[i % len(archived)]["id"]
    if kind == 5:
        return active[i % len(active)]["id"]
    return None


def _contact_properties(
    i: int,
    segment: ReengagementSegment,
    active: Sequence[Mapping],
    archived: Sequence[Mapping],
) -> dict[str, str | None]:
    owner = _owner_of(i, active, archived)
    return {
        "email": f"buyer{i}@demo-customer.example",
        "phone": f"+65 6100 {i:04d}",
        "firstname": "Buyer",
        "lastname": str(i),
        "hubspot_owner_id": owner,
        "call_assigned_to": owner,  # whoever owns the record was given its last call
        "lifecyclestage": _LIFECYCLE_STAGES[segment],
    }


def prepare_ownership_demo(url: str, owners: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """What an admin sets up in the warehouse before the ownership assets run: the workspace,
    its reps' lists and each segment's HubSpot list; the environment those assets need."""
    with get_session(url) as session:
        session.execute(
            pg_insert(Subscription)
            .values(id=DEMO_SUBSCRIPTION_ID, name="Demo workspace")
            .on_conflict_do_nothing()
        )
        _seed_reps(session, owners)
        store = CrmStore(session)
        for segment, list_id in SEGMENT_LIST_IDS.items():
            # `morpheus segment set`'s step: the segment's members come from this list.
            set_segment_list(store, DEMO_SUBSCRIPTION_ID, segment.value, list_id)
    return {
        "MORPHEUS_SUBSCRIPTION_ID": str(DEMO_SUBSCRIPTION_ID),
        "HUBSPOT_UNASSIGNED_LIST_ID": UNASSIGNED_LIST_ID,
    }


def _seed_reps(session: Any, owners: Sequence[Mapping[str, Any]]) -> None:
    """What sales ops set up by hand: each rep's call list, Nooks for a third of them. The
    owner ids come from the ``sales_reps`` mirror."""
    rows = [
        {
            "subscriptionId": DEMO_SUBSCRIPTION_ID,
            "email": owner["email"].lower(),
            "activeListId": _rep_list_id(owner["id"]),
            "nooksUserId": f"nooks-{owner['id']}" if i % 3 == 0 else None,
            "isActive": False,  # until the mirror has seen the owner
        }
        for i, owner in enumerate(owners)
    ]
    session.execute(pg_insert(SalesRep).values(rows).on_conflict_do_nothing())


def assignments_per_rep(
    url: str,
) -> tuple[list[tuple[str, bool, int, int]], dict[str, int]]:
    """Per rep of the demo workspace (every rep, active or not): round-robin assignments and
    all follow-ups (with kept and deal owners); the count of every outcome."""
    with get_session(url) as session:
        per_rep = session.execute(
            select(
                SalesRep.email,
                SalesRep.isActive,
                func.count(ReengagementAssignment.id).filter(
                    ReengagementAssignment.roundRobin.is_(True)
                ),
                func.count(ReengagementAssignment.id),
            )
            .outerjoin(ReengagementAssignment, ReengagementAssignment.salesRepId == SalesRep.id)
            .where(SalesRep.subscriptionId == DEMO_SUBSCRIPTION_ID)
            .group_by(SalesRep.id)
            .order_by(SalesRep.id)
        ).all()
        outcomes = session.execute(
            select(ReengagementAssignment.outcome, func.count())
            .where(ReengagementAssignment.subscriptionId == DEMO_SUBSCRIPTION_ID)
            .group_by(ReengagementAssignment.outcome)
            .order_by(ReengagementAssignment.outcome)
        ).all()
    return [tuple(row) for row in per_rep], {
        AssignmentOutcome(outcome).value: n for outcome, n in outcomes
    }


def members_per_segment_list(url: str) -> list[tuple[str, str | None, int]]:
    """Per segment of the demo workspace, as ``morpheus segment list`` shows them: its HubSpot
    list (``None``: none set) and how many of the segment's members were read from that list
    and are still on it."""
    with get_session(url) as session:
        configured = segment_lists(CrmStore(session), DEMO_SUBSCRIPTION_ID)
        rows = session.execute(
            select(
                ReengagementSegmentMember.segment,
                ReengagementSegmentMember.hubspotListId,
                func.count(ReengagementSegmentMember.id),
            )
            .where(
                ReengagementSegmentMember.subscriptionId == DEMO_SUBSCRIPTION_ID,
                ReengagementSegmentMember.hubspotListId.is_not(None),
                ReengagementSegmentMember.leftListAt.is_(None),
            )
            .group_by(ReengagementSegmentMember.segment, ReengagementSegmentMember.hubspotListId)
        ).all()
    counts = {(ReengagementSegment(segment).value, list_id): n for segment, list_id, n in rows}
    return [
        (segment, list_id, counts.get((segment, list_id), 0)) for segment, list_id in configured
    ]
