"""The ownership slice's share of the demo: a workspace, its reps' lists, contacts in every
kind of ownership, and members in all six re-engagement segments (docs/ownership.md).

Deterministic and idempotent: the workspace has a fixed id, contacts are matched on email and
segment events on their fixed ids, so a second demo finds everything processed and prints the
same assignments.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from morpheus_pipelines.crm.models import (
    AssignmentOutcome,
    Contact,
    ReengagementAssignment,
    ReengagementSegment,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.crm.repositories.reengagement import ReengagementSegmentMemberRepository
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator

DEMO_SUBSCRIPTION_ID = uuid.UUID("6d6f7270-6865-7573-0000-00000000d3d0")
UNASSIGNED_LIST_ID = "700000"
CONTACTS = 120
ARCHIVED_OWNERS = 6  # the non-APAC sales people have left: their owners are archived
_FIRST_CONTACT_ID = 880_000
_SEGMENTS = list(ReengagementSegment)


def _rep_list_id(owner_id: str) -> str:
    return str(710_000 + int(owner_id))


def prepare_ownership_demo(
    url: str, hubspot: HubSpotEmulator, owners: Sequence[dict[str, Any]]
) -> dict[str, str]:
    """Seed the warehouse and the emulated portal; the environment the ownership assets need."""
    active, archived = list(owners[:-ARCHIVED_OWNERS]), list(owners[-ARCHIVED_OWNERS:])
    for owner in archived:
        hubspot.set_owner_archived(owner["id"])
    hubspot.set_owners(
        [
            *hubspot.to_data()["owners"],
            {"id": DIALER_FALLBACK_HUBSPOT_OWNER_ID, "email": "ai-dialer@demo.example"},
        ]
    )
    hubspot.set_list(UNASSIGNED_LIST_ID, name="Re-engagement, unassigned", object_type_id="0-1")
    for owner in owners:
        hubspot.set_list(
            _rep_list_id(owner["id"]), name=f"{owner['email']} calls", object_type_id="0-1"
        )
    with get_session(url) as session:
        session.execute(
            pg_insert(Subscription)
            .values(id=DEMO_SUBSCRIPTION_ID, name="Demo workspace")
            .on_conflict_do_nothing()
        )
        _seed_reps(session, owners)
        contact_ids = _seed_contacts(session, hubspot, active, archived)
        _seed_members(session, contact_ids, active, archived)
    return {
        "MORPHEUS_SUBSCRIPTION_ID": str(DEMO_SUBSCRIPTION_ID),
        "HUBSPOT_UNASSIGNED_LIST_ID": UNASSIGNED_LIST_ID,
    }


def _seed_reps(session: Any, owners: Sequence[dict[str, Any]]) -> None:
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


def _owner_of(i: int, active: Sequence[dict], archived: Sequence[dict]) -> str | None:
    """A spread of ownership: none, the AI owner, a departed rep, an active rep."""
    kind = i % 6
    if kind == 1:
        return DIALER_FALLBACK_HUBSPOT_OWNER_ID
    if kind == 3:
        return archived[i % len(archived)]["id"]
    if kind == 5:
        return active[i % len(active)]["id"]
    return None


def _seed_contacts(
    session: Any, hubspot: HubSpotEmulator, active: Sequence[dict], archived: Sequence[dict]
) -> list[int]:
    rows = []
    for i in range(CONTACTS):
        hubspot_id = str(_FIRST_CONTACT_ID + i)
        owner = _owner_of(i, active, archived)
        hubspot.set_contact(hubspot_id, {"hubspot_owner_id": owner})
        rows.append(
            {
                "subscriptionId": DEMO_SUBSCRIPTION_ID,
                "email": f"buyer{i}@demo-customer.example",
                "firstName": "Buyer",
                "lastName": str(i),
                "hubspotContactId": hubspot_id,
                "hubspotOwnerId": owner,
            }
        )
    session.execute(pg_insert(Contact).values(rows).on_conflict_do_nothing())
    statement = (
        select(Contact.id)
        .where(Contact.subscriptionId == DEMO_SUBSCRIPTION_ID)
        .order_by(Contact.hubspotContactId)
    )
    return list(session.scalars(statement))


def _seed_members(
    session: Any, contact_ids: Sequence[int], active: Sequence[dict], archived: Sequence[dict]
) -> None:
    rows = []
    for i, contact_id in enumerate(contact_ids):
        segment = _SEGMENTS[i % len(_SEGMENTS)]
        deal_owner = None
        if segment in (ReengagementSegment.NO_SHOW, ReengagementSegment.LOST_DEAL):
            deal_owner = (archived if i % 4 == 0 else active)[i % 3]["id"]
        rows.append(
            {
                "subscriptionId": DEMO_SUBSCRIPTION_ID,
                "segment": segment,
                "sourceEventId": f"demo-{segment.value}-{i}",
                "contactId": contact_id,
                "dealOwnerId": deal_owner,
            }
        )
    ReengagementSegmentMemberRepository().add_members(session, rows)


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
