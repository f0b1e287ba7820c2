"""Segment members read from HubSpot contact lists: the step over real HTTP against the
emulator and the real warehouse, then the ``reengagement_segment_members`` asset through
Dagster, down to ``reengagement_assignments`` processing what it wrote."""

from __future__ import annotations

import dagster as dg
from sqlalchemy import select

from morpheus_pipelines.assets.ownership import defs as ownership_defs
from morpheus_pipelines.crm.models import Contact, ReengagementSegment, ReengagementSegmentMember
from morpheus_pipelines.crm.steps.segment_lists import SegmentListsRun, read_segment_lists
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.resources.hubspot import HubSpotResource
from morpheus_pipelines.resources.notifier import NotifierResource
from morpheus_pipelines.resources.ownership import OwnershipResource
from morpheus_pipelines.resources.warehouse import WarehouseResource
from tests.support.ownership import TOKEN, UNASSIGNED_LIST, World

S = ReengagementSegment
SUPPLIER_LIST = "5100"


def _contact_list(world: World, list_id: str, ids: range, *, object_type: str = "0-1") -> None:
    for i in ids:
        world.hubspot.set_contact(
            str(i), {"email": f"p{i}@customer.example", "hubspot_owner_id": None}
        )
    world.hubspot.set_list(list_id, object_type_id=object_type, members=[str(i) for i in ids])


def _configure(world: World, segment: S, list_id: str) -> None:
    with world.sessions() as session:
        CrmStore.segment_lists.set_list(session, world.subscription_id, segment.value, list_id)


def _read(world: World, page_size: int = 3) -> SegmentListsRun:
    with world.client() as client:
        return read_segment_lists(
            client, world.sessions, world.subscription_id, page_size=page_size
        )


def _members(world: World) -> list[ReengagementSegmentMember]:
    with world.sessions() as session:
        return list(
            session.scalars(
                select(ReengagementSegmentMember)
                .where(ReengagementSegmentMember.subscriptionId == world.subscription_id)
                .order_by(ReengagementSegmentMember.id)
            )
        )


def _claimable(world: World, segment: S = S.SUPPLIER) -> list[str]:
    with world.sessions() as session:
        claimed = CrmStore.members.claim_new(session, world.subscription_id, segment, limit=100)
        return [m.hubspot_contact_id for m in claimed]


def test_members_are_read_across_pages_and_their_contacts_upserted(world: World) -> None:
    _contact_list(world, SUPPLIER_LIST, range(2001, 2008))
    world.hubspot.set_contact("2001", {"phone": None, "hubspot_owner_id": "77"})
    with world.sessions() as session:  # a contact we already have, with a phone HubSpot lacks
        session.add(
            Contact(subscriptionId=world.subscription_id, hubspotContactId="2001", phone="+1555")
        )
    _configure(world, S.SUPPLIER, SUPPLIER_LIST)

    run = _read(world)

    assert run.succeeded
    [read] = run.lists
    assert read.counts() == {
        "read": 7,
        "new": 7,
        "back": 0,
        "left": 0,
        "unchanged": 0,
        "unknown_contacts": 0,
        "contacts_upserted": 7,
    }
    assert [e.page for e in world.hubspot.log.entries("memberships")] == [0, 1, 2]
    members = _members(world)
    assert [m.sourceEventId for m in members] == [f"hubspot-contact:{i}" for i in range(2001, 2008)]
    assert {m.hubspotListId for m in members} == {SUPPLIER_LIST}
    with world.sessions() as session:
        kept = session.scalars(select(Contact).where(Contact.hubspotContactId == "2001")).one()
        assert (kept.phone, kept.email, kept.hubspotOwnerId) == (
            "+1555",
            "p2001@customer.example",
            "77",
        )
    assert sorted(_claimable(world)) == [str(i) for i in range(2001, 2008)]


def test_a_member_who_leaves_is_marked_and_not_claimed(world: World) -> None:
    _contact_list(world, SUPPLIER_LIST, range(2001, 2004))
    _configure(world, S.SUPPLIER, SUPPLIER_LIST)
    _read(world)
    world.hubspot.remove_list_members(SUPPLIER_LIST, ["2002"])

    [read] = _read(world).lists

    assert (read.read, read.new, read.left, read.unchanged) == (2, 0, 1, 2)
    left = [m for m in _members(world) if m.leftListAt is not None]
    assert [m.sourceEventId for m in left] == ["hubspot-contact:2002"]  # kept, not deleted
    assert sorted(_claimable(world)) == ["2001", "2003"]
    with world.sessions() as session:
        assert CrmStore.members.count_new(session, world.subscription_id) == {"supplier": 2}
    # marked once: a second read finds nothing more to mark
    assert _read(world).lists[0].left == 0


def test_a_new_member_is_enrolled_once_and_a_processed_one_never_again(world: World) -> None:
    _contact_list(world, SUPPLIER_LIST, range(2001, 2003))
    _configure(world, S.SUPPLIER, SUPPLIER_LIST)
    assert _read(world).lists[0].new == 2
    _contact_list(world, SUPPLIER_LIST, range(2001, 2004))

    first, second = _read(world).lists[0], _read(world).lists[0]

    assert (first.new, first.unchanged) == (1, 2)
    assert (second.new, second.unchanged, second.contacts_upserted) == (0, 3, 0)
    assert len(_members(world)) == 3
    # processed, then off the list and back on: the member is not enrolled again
    world.add_rep("rep@acme.test", "501")
    world.run(S.SUPPLIER)
    assert _claimable(world) == []
    world.hubspot.remove_list_members(SUPPLIER_LIST, ["2001"])
    assert _read(world).lists[0].left == 1
    world.hubspot.add_list_members(SUPPLIER_LIST, ["2001"])
    back = _read(world).lists[0]
    assert (back.new, back.back) == (0, 1)
    assert _claimable(world) == []
    assert len(_members(world)) == 3


def _resources(world: World) -> dict:
    return {
        "warehouse": WarehouseResource(database_url=world.url),
        "hubspot": HubSpotResource(
            base_url=world.hubspot.base_url,
            private_app_token=TOKEN,
            request_timeout=2.0,
            retry_count=1,
            max_backoff_seconds=0.01,
        ),
        "ownership": OwnershipResource(
            subscription_id=str(world.subscription_id), unassigned_list_id=UNASSIGNED_LIST
        ),
        "notifier": NotifierResource(webhook_url=""),
    }


def _materialize(world: World, *keys: str) -> dg.ExecuteInProcessResult:
    assets = [a for a in ownership_defs.assets or [] if a.key.to_user_string() in keys]
    return dg.materialize(assets, resources=_resources(world), raise_on_error=False)


def _metadata(result: dg.ExecuteInProcessResult, key: str) -> dict:
    [event] = [
        e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == key
    ]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def _check(result: dg.ExecuteInProcessResult) -> dg.AssetCheckEvaluation:
    [check] = [
        e for e in result.get_asset_check_evaluations() if e.check_name == "every_segment_list_read"
    ]
    return check


def test_a_failure_mid_paging_writes_nothing_for_that_list_and_the_check_fails(
    world: World,
) -> None:
    _contact_list(world, SUPPLIER_LIST, range(3001, 3261))  # two pages of 250
    _contact_list(world, "5200", range(4001, 4003))
    _configure(world, S.SUPPLIER, SUPPLIER_LIST)
    _configure(world, S.EMAIL_CLICK, "5200")
    world.hubspot.fail_page(1, "500", times=None)

    result = _materialize(world, "reengagement_segment_members")

    assert result.success
    check = _check(result)
    assert not check.passed
    assert check.severity is dg.AssetCheckSeverity.ERROR
    failed = check.metadata["failed"].value
    assert list(failed) == ["supplier"] and "500" in failed["supplier"]
    assert {m.segment for m in _members(world)} == {S.EMAIL_CLICK}  # the other list applied
    with world.sessions() as session:
        supplier_contacts = session.scalars(
            select(Contact).where(Contact.hubspotContactId == "3001")
        ).all()
        assert supplier_contacts == []


def test_a_company_list_configured_as_a_segment_is_refused(world: World) -> None:
    world.hubspot.set_list("5300", name="Target accounts", object_type_id="0-2", members=["1"])
    _configure(world, S.LOST_DEAL, "5300")

    result = _materialize(world, "reengagement_segment_members")

    check = _check(result)
    assert not check.passed
    error = check.metadata["failed"].value["lost_deal"]
    assert "'lost_deal'" in error and "list 5300" in error and "not a contact list" in error
    assert _members(world) == []
    assert world.hubspot.log.entries("memberships") == []


def test_a_list_still_processing_is_read_next_time(world: World) -> None:
    _contact_list(world, SUPPLIER_LIST, range(2001, 2003))
    _configure(world, S.SUPPLIER, SUPPLIER_LIST)
    world.hubspot.report_processing_status("PROCESSING")

    [read] = _read(world).lists

    assert "is PROCESSING" in read.error
    assert _members(world) == []
    assert _read(world).lists[0].new == 2


def test_an_unconfigured_subscription_reads_nothing_and_passes(world: World) -> None:
    result = _materialize(world, "reengagement_segment_members")

    assert result.success
    assert _check(result).passed
    metadata = _metadata(result, "reengagement_segment_members")
    assert (metadata["members_read"], metadata["dagster/row_count"]) == (0, 0)


def test_reengagement_assignments_processes_the_members_the_asset_wrote(world: World) -> None:
    world.hubspot.set_list("L601", object_type_id="0-1")
    world.hubspot.set_owners([{"id": "601", "email": "rep@acme.test"}])
    _contact_list(world, SUPPLIER_LIST, range(2001, 2005))
    _configure(world, S.SUPPLIER, SUPPLIER_LIST)

    keys = ("sales_reps", "reengagement_segment_members", "reengagement_assignments")
    result = _materialize(world, *keys)

    assert result.success
    counts = _metadata(result, "reengagement_segment_members")["counts_by_segment"]
    assert counts["supplier"]["new"] == 4
    assigned = _metadata(result, "reengagement_assignments")
    assert assigned["members_processed"] == 4
    assert assigned["write_backs_written"] == 4
    assert all(
        world.hubspot.contact(str(i))["properties"]["hubspot_owner_id"] == "601"
        for i in range(2001, 2005)
    )
    again = _materialize(world, *keys)
    assert _metadata(again, "reengagement_segment_members")["members_new"] == 0
    assert _metadata(again, "reengagement_assignments")["members_processed"] == 0
