"""The ownership share of ``morpheus demo``: its contacts and segment lists live in the
emulated HubSpot portal, the segments point at those lists through ``morpheus segment set``'s
step, and ``reengagement_job`` reads them into the warehouse before assigning them (over real
HTTP, on the real warehouse)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import dagster as dg
import pytest
from sqlalchemy import select

from morpheus_pipelines.assets.ownership import defs as ownership_defs
from morpheus_pipelines.crm.models import Contact, ReengagementSegment, ReengagementSegmentMember
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.demo.ownership import (
    ARCHIVED_OWNERS,
    CONTACTS,
    DEMO_SUBSCRIPTION_ID,
    SEGMENT_LIST_IDS,
    UNASSIGNED_LIST_ID,
    assignments_per_rep,
    members_per_segment_list,
    prepare_ownership_demo,
    with_ownership_portal,
)
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.devtools.emulators.hubspot import build_data
from morpheus_pipelines.platform.text.contact_data import phone_as_recorded
from morpheus_pipelines.platform.text.normalise import normalise_email
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource

TOKEN = "pat-na1-demo-ownership-test"
ENTERED = datetime(2026, 7, 14, 1, tzinfo=UTC)
OWNERS = [
    {"id": str(500 + i), "email": f"rep{i}@morpheus.example.com", "firstName": f"Rep{i}"}
    for i in range(18)
]
CONTACT_PROPERTIES = {"email", "phone", "hubspot_owner_id", "call_assigned_to", "lifecyclestage"}


def _portal() -> dict:
    return with_ownership_portal(build_data([], token=TOKEN), OWNERS, entered_at=ENTERED)


def _list_members(portal: dict) -> dict[ReengagementSegment, set[str]]:
    return {
        segment: {m["id"] for m in portal["lists"][list_id]["members"]}
        for segment, list_id in SEGMENT_LIST_IDS.items()
    }


def test_the_portal_has_one_contact_list_per_segment_with_the_demo_contacts() -> None:
    data = build_data([{"id": "1", "name": "Acme"}], token=TOKEN)
    portal = with_ownership_portal(data, OWNERS, entered_at=ENTERED)

    assert set(data["lists"]) == {"19544"} and "contacts" not in data  # the input is kept
    assert portal["companies"] == data["companies"] and "19544" in portal["lists"]
    members = _list_members(portal)
    assert set(members) == set(ReengagementSegment)
    assert len(set(SEGMENT_LIST_IDS.values()) | {UNASSIGNED_LIST_ID}) == 7
    for list_id in [*SEGMENT_LIST_IDS.values(), UNASSIGNED_LIST_ID]:
        assert portal["lists"][list_id]["objectTypeId"] == "0-1", list_id
    contacts = portal["contacts"]
    assert len(contacts) == CONTACTS
    assert set().union(*members.values()) == set(contacts)
    for contact in contacts.values():
        assert set(contact["properties"]) >= CONTACT_PROPERTIES
        assert contact["properties"]["email"] and contact["properties"]["phone"]
    on_two_lists = Counter(i for ids in members.values() for i in ids)
    assert sorted(Counter(on_two_lists.values()).items()) == [(1, CONTACTS - 12), (2, 12)]
    stamps = {
        m["membershipTimestamp"]
        for list_id in SEGMENT_LIST_IDS.values()
        for m in portal["lists"][list_id]["members"]
    }
    assert stamps == {"2026-07-14T01:00:00.000Z"}
    owners = {o["id"]: o for o in portal["owners"]}
    assert [o["id"] for o in OWNERS if owners[o["id"]]["archived"]] == [
        o["id"] for o in OWNERS[-ARCHIVED_OWNERS:]
    ]
    assert DIALER_FALLBACK_HUBSPOT_OWNER_ID in owners
    kinds = Counter(
        "none"
        if not (owner := c["properties"]["hubspot_owner_id"])
        else "ai"
        if owner == DIALER_FALLBACK_HUBSPOT_OWNER_ID
        else "archived"
        if owners[owner]["archived"]
        else "active"
        for c in contacts.values()
    )
    assert set(kinds) == {"none", "ai", "archived", "active"}


def _run_reengagement_job(url: str, hubspot: HubSpotEmulator) -> dg.ExecuteInProcessResult:
    resources = {
        "warehouse": WarehouseResource(database_url=url),
        "hubspot": HubSpotResource(
            base_url=hubspot.base_url,
            private_app_token=TOKEN,
            request_timeout=5.0,
            retry_count=1,
            max_backoff_seconds=0.01,
        ),
        "ownership": OwnershipResource(
            subscription_id=str(DEMO_SUBSCRIPTION_ID), unassigned_list_id=UNASSIGNED_LIST_ID
        ),
        "notifier": NotifierResource(webhook_url=""),
    }
    defs = dg.Definitions.merge(ownership_defs, dg.Definitions(resources=resources))
    return defs.resolve_job_def("reengagement_job").execute_in_process(raise_on_error=False)


def _members(url: str) -> list[ReengagementSegmentMember]:
    with get_session(url) as session:
        return list(
            session.scalars(
                select(ReengagementSegmentMember).where(
                    ReengagementSegmentMember.subscriptionId == DEMO_SUBSCRIPTION_ID
                )
            )
        )


@pytest.fixture
def hubspot() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator(_portal()) as emulator:
        yield emulator
    assert emulator.errors == []


def test_the_reengagement_job_reads_the_segment_lists_then_assigns_their_members(
    database_url: str, hubspot: HubSpotEmulator
) -> None:
    prepare_ownership_demo(database_url, OWNERS)
    # Before the job nothing is in the warehouse but the configuration.
    assert _members(database_url) == []
    assert [n for _, _, n in members_per_segment_list(database_url)] == [0] * 6

    result = _run_reengagement_job(database_url, hubspot)

    assert result.success
    order = [e.asset_key.to_user_string() for e in result.get_asset_materialization_events()]
    assert sorted(order) == [
        "hubspot_task_completions",
        "reengagement_assignments",
        "reengagement_segment_members",
        "sales_reps",
    ]
    # The lists are read, and the tasks completed in HubSpot known, before anyone is assigned.
    assigned = order.index("reengagement_assignments")
    assert order.index("sales_reps") < order.index("reengagement_segment_members") < assigned
    assert order.index("hubspot_task_completions") < assigned
    assert all(e.passed for e in result.get_asset_check_evaluations())
    members = _members(database_url)
    lists = _list_members(_portal())
    # Every member was read from its segment's list: none inserted as an event.
    for member in members:
        assert member.hubspotListId == SEGMENT_LIST_IDS[member.segment], member.sourceEventId
        assert member.sourceEventId.startswith("hubspot-contact:")
        assert member.enteredAt == ENTERED
    with get_session(database_url) as session:
        contacts = {
            c.id: c
            for c in session.scalars(
                select(Contact).where(Contact.subscriptionId == DEMO_SUBSCRIPTION_ID)
            )
        }
    read: dict[ReengagementSegment, set[str]] = {s: set() for s in ReengagementSegment}
    for member in members:
        read[member.segment].add(contacts[member.contactId].hubspotContactId)
    assert read == lists
    first = contacts[min(contacts)]
    properties = hubspot.contact(first.hubspotContactId)["properties"]
    # Stored as intake stores them (docs/leads.md, "Contact data"): the same person's lead
    # and HubSpot contact compare equal.
    assert (first.email, first.phone) == (
        normalise_email(properties["email"]),
        phone_as_recorded(properties["phone"]),
    )
    assert first.phone.startswith("+") and " " not in first.phone
    assert members_per_segment_list(database_url) == [
        (s.value, SEGMENT_LIST_IDS[s], len(lists[s])) for s in ReengagementSegment
    ]
    per_rep, outcomes = assignments_per_rep(database_url)
    assert outcomes == {"kept_owner": 20, "reassigned": 100, "skipped_active_task": 12}
    assert sum(rotated for _, _, rotated, _ in per_rep) == 100
    assert all(total == 0 for _, active, _, total in per_rep if not active)

    # A second demo on the same warehouse changes nothing: members join a segment once.
    prepare_ownership_demo(database_url, OWNERS)
    assert _run_reengagement_job(database_url, hubspot).success
    assert len(_members(database_url)) == len(members)
    assert assignments_per_rep(database_url) == (per_rep, outcomes)
