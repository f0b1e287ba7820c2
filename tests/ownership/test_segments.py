"""The re-engagement segments end to end: warehouse, ownership block, follow-up tasks, list
enrolment and the HubSpot write-back through the emulator (docs/ownership.md)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from morpheus_pipelines.crm.models import (
    Activity,
    ActivityType,
    AssignmentOutcome,
    FollowUpTask,
    ReengagementAssignment,
    ReengagementSegment,
    WriteBackStatus,
)
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.steps.reengagement import MAX_WRITE_BACK_ATTEMPTS
from tests.support.events import EventLines
from tests.support.ownership import UNASSIGNED_LIST, World

S = ReengagementSegment


def test_reassignment_writes_both_properties_and_enrols_on_the_reps_list(world: World) -> None:
    rep = world.add_rep("ana@acme.test", "101")
    contact = world.add_contact(owner=DIALER_FALLBACK_HUBSPOT_OWNER_ID)
    world.add_member(S.SUPPLIER, contact)

    run = world.run(S.SUPPLIER)

    assert run.outcomes == {"reassigned": 1}
    props = world.hubspot_contact(contact)["properties"]
    assert props["hubspot_owner_id"] == props["call_assigned_to"] == "101"
    assert world.contact(contact).hubspotOwnerId == "101"
    [task] = world.tasks(contact)
    assert task.salesRepId == rep and task.segment == "supplier"
    assert world.list_members("L101") == [world.contact(contact).hubspotContactId]
    assert world.assignment(contact).writeBackStatus is WriteBackStatus.DONE


def test_an_active_owner_keeps_the_contact_and_nothing_is_written_to_hubspot(
    world: World,
) -> None:
    world.add_rep("ana@acme.test", "101")
    world.add_rep("ben@acme.test", "102")
    contact = world.add_contact(owner="102")
    world.add_member(S.EMAIL_CLICK, contact)

    world.run(S.EMAIL_CLICK)

    assert world.assignment(contact).outcome is AssignmentOutcome.KEPT_OWNER
    # "Leave it alone": neither property is written, the call still goes to the owner's task.
    assert world.hubspot.log.entries("contacts_batch_update") == []
    assert world.hubspot_contact(contact)["properties"]["hubspot_owner_id"] == "102"
    assert world.tasks(contact)[0].salesRepId == world.assignment(contact).salesRepId


@pytest.mark.parametrize("unassigned_list", [UNASSIGNED_LIST, None], ids=["list", "no_list"])
def test_no_rep_enrols_unassigned_with_a_warning_that_masks_the_email(
    world: World, event_lines: EventLines, unassigned_list: str | None
) -> None:
    """With or without an unassigned list configured: the task without a rep and the masked
    warning are there either way; only the list enrolment needs the list."""
    contacts = {}
    for segment in (S.EMAIL_CLICK, S.SUPPLIER, S.NO_SHOW, S.LOST_DEAL):
        contacts[segment] = world.add_contact()
        world.add_member(segment, contacts[segment])

    for segment in contacts:
        run = world.assign(segment, unassigned_list_id=unassigned_list)
        world.write_back()
        assert run.outcomes == {"unassigned": 1}

    for segment, contact in contacts.items():
        [task] = world.tasks(contact)
        assert task.salesRepId is None, segment
        assert world.hubspot_contact(contact)["writes"] == 0  # no property written
        assert world.assignment(contact).listId == unassigned_list
    expected_members = [world.contact(c).hubspotContactId for c in contacts.values()]
    assert sorted(world.list_members(UNASSIGNED_LIST)) == (
        sorted(expected_members) if unassigned_list else []
    )
    no_rep = event_lines.events("reengagement_no_rep")
    assert len(no_rep) == 4 and all(w["level"] == "WARNING" for w in no_rep)
    assert all("@customer.example" in w["contact_email"] for w in no_rep)
    assert all(w["contact_email"].startswith("p***@") for w in no_rep)


def test_no_rep_aborts_the_whole_campaign_target_batch_and_the_next_run_completes_it(
    world: World, event_lines: EventLines
) -> None:
    owned = [world.add_contact() for _ in range(3)]
    for contact in owned:
        world.add_member(S.CAMPAIGN_TARGET, contact)

    run = world.run(S.CAMPAIGN_TARGET)

    assert run.aborted and run.processed == 0
    assert world.tasks() == [] and world.count(ReengagementAssignment) == 0
    assert world.list_members(UNASSIGNED_LIST) == []
    [aborted] = event_lines.events("reengagement_batch_aborted")
    assert aborted["level"] == "ERROR" and aborted["segment"] == "campaign_target"

    world.add_rep("ana@acme.test", "101")
    assert world.run(S.CAMPAIGN_TARGET).outcomes == {"reassigned": 3}
    assert len(world.list_members("L101")) == 3


def test_an_aborted_campaign_batch_stops_that_batch_not_the_segment_run(
    world: World, event_lines: EventLines
) -> None:
    """Nobody to assign: the batch that needs the rotation is rolled back, and the batches
    after it in the same run still go (here contacts that already have live work, which
    need no rep); the aborted members stay new for the next run."""
    from datetime import UTC, datetime, timedelta

    from morpheus_pipelines.crm.models import FollowUpTask

    ownerless = [world.add_contact() for _ in range(2)]
    busy = [world.add_contact() for _ in range(2)]
    for contact in ownerless + busy:  # member order: the ownerless batch first
        world.add_member(S.CAMPAIGN_TARGET, contact)
    with world.sessions() as session:
        for contact in busy:
            session.add(
                FollowUpTask(
                    subscriptionId=world.subscription_id,
                    contactId=contact,
                    type="CALL",
                    dueAt=datetime.now(UTC) + timedelta(days=1),
                )
            )

    run = world.assign(S.CAMPAIGN_TARGET, batch_size=2)

    assert run.aborted and run.aborted_batches == 1
    assert run.outcomes == {"skipped_active_task": 2}
    assert len(event_lines.events("reengagement_batch_aborted")) == 1
    world.add_rep("ana@acme.test", "101")
    assert world.assign(S.CAMPAIGN_TARGET, batch_size=2).outcomes == {"reassigned": 2}


def test_dialer_call_ended_falls_back_to_the_ai_owner_and_records_the_ai_call(
    world: World,
) -> None:
    contact = world.add_contact()
    world.add_member(S.DIALER_CALL_ENDED, contact, event_id="call-77")

    assert world.run(S.DIALER_CALL_ENDED).outcomes == {"fallback_owner": 1}

    props = world.hubspot_contact(contact)["properties"]
    assert props["hubspot_owner_id"] == props["call_assigned_to"] == "86817215"
    with world.sessions() as session:
        [call] = session.scalars(select(Activity).where(Activity.contactId == contact)).all()
    assert call.type is ActivityType.CALL and call.externalId == "dialer-call:call-77"
    assert call.metadata_["hubspot_owner_id"] == DIALER_FALLBACK_HUBSPOT_OWNER_ID


def test_the_ai_call_is_owned_by_the_ai_owner_even_when_a_human_owns_the_contact(
    world: World,
) -> None:
    world.add_rep("ana@acme.test", "101", nooks="n-1")
    contact = world.add_contact(owner="101")
    world.add_member(S.DIALER_CALL_ENDED, contact, event_id="call-78")

    world.run(S.DIALER_CALL_ENDED)

    assert world.assignment(contact).outcome is AssignmentOutcome.KEPT_OWNER
    with world.sessions() as session:
        call = session.scalars(select(Activity).where(Activity.contactId == contact)).one()
    assert call.metadata_["hubspot_owner_id"] == DIALER_FALLBACK_HUBSPOT_OWNER_ID
    assert world.tasks(contact)[0].salesRepId is not None


def test_an_ai_call_does_not_suppress_an_email_click_follow_up_but_a_reps_call_does(
    world: World,
) -> None:
    world.add_rep("ana@acme.test", "101")
    ai_called, rep_called = world.add_contact(), world.add_contact()
    with world.sessions() as session:
        for contact, owner in ((ai_called, DIALER_FALLBACK_HUBSPOT_OWNER_ID), (rep_called, "101")):
            session.add(
                Activity(
                    subscriptionId=world.subscription_id,
                    externalId=f"call-{contact}",
                    type=ActivityType.CALL,
                    contactId=contact,
                    metadata_={"hubspot_owner_id": owner},
                )
            )
    world.add_member(S.EMAIL_CLICK, ai_called)
    world.add_member(S.EMAIL_CLICK, rep_called)

    world.run(S.EMAIL_CLICK)

    assert world.assignment(ai_called).outcome is AssignmentOutcome.REASSIGNED
    assert world.assignment(rep_called).outcome is AssignmentOutcome.SKIPPED_RECENT_HUMAN_CALL
    assert world.tasks(rep_called) == []


def test_a_contact_with_live_work_gets_no_second_task(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    contact = world.add_contact()
    world.add_member(S.EMAIL_CLICK, contact)
    world.add_member(S.SUPPLIER, contact)
    world.add_member(S.SUPPLIER, contact)  # two events of one segment in one batch

    world.run(S.EMAIL_CLICK)
    assert world.run(S.SUPPLIER).outcomes == {"skipped_active_task": 2}
    assert len(world.tasks(contact)) == 1


def test_re_running_creates_no_second_task_enrolment_or_reassignment(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    world.add_rep("ben@acme.test", "102")
    contacts = [world.add_contact() for _ in range(5)]
    for contact in contacts:
        world.add_member(S.SUPPLIER, contact, event_id=f"supplier-{contact}")
    world.run(S.SUPPLIER)
    writes = {c: world.hubspot_contact(c)["writes"] for c in contacts}
    before = (world.tasks(), world.list_members("L101"), world.list_members("L102"))

    # the same events delivered again, and the segment run again
    for contact in contacts:
        world.add_member(S.SUPPLIER, contact, event_id=f"supplier-{contact}")
    assert world.run(S.SUPPLIER).processed == 0
    assert world.write_back().written == 0

    after = (world.tasks(), world.list_members("L101"), world.list_members("L102"))
    assert [t.id for t in after[0]] == [t.id for t in before[0]]
    assert after[1:] == before[1:]
    assert {c: world.hubspot_contact(c)["writes"] for c in contacts} == writes


def test_deal_owner_routing_through_hubspot(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    world.add_rep("bdr@acme.test", "102")
    world.add_rep("left@acme.test", "90", active=False)
    routed, departed = world.add_contact(owner="101"), world.add_contact()
    world.add_member(S.NO_SHOW, routed, deal_owner="102")
    world.add_member(S.LOST_DEAL, departed, deal_owner="90")

    world.run(S.NO_SHOW)
    world.run(S.LOST_DEAL)

    routed_props = world.hubspot_contact(routed)["properties"]
    assert routed_props["call_assigned_to"] == "102"
    assert routed_props["hubspot_owner_id"] == "101"  # the record stays with its owner
    [update] = [
        e.body["inputs"]
        for e in world.hubspot.log.entries("contacts_batch_update")
        if e.body["inputs"][0]["id"] == world.contact(routed).hubspotContactId
    ]
    assert update[0]["properties"] == {"call_assigned_to": "102"}
    assert world.tasks(routed)[0].salesRepId == world.assignment(routed).salesRepId
    assert world.assignment(departed).outcome is AssignmentOutcome.REASSIGNED
    departed_props = world.hubspot_contact(departed)["properties"]
    assert departed_props["hubspot_owner_id"] == departed_props["call_assigned_to"]


def test_a_deactivated_rep_leaves_the_rotation_and_their_contacts_are_reassigned(
    world: World,
) -> None:
    ana = world.add_rep("ana@acme.test", "101")
    world.add_rep("ben@acme.test", "102")
    contact = world.add_contact(owner="101")
    world.add_member(S.SUPPLIER, contact)
    world.run(S.SUPPLIER)
    assert world.assignment(contact).outcome is AssignmentOutcome.KEPT_OWNER
    with world.sessions() as session:  # the follow-up is done
        session.get(FollowUpTask, world.tasks(contact)[0].id).status = "COMPLETED"

    world.set_rep_active(ana, False)
    world.add_member(S.EMAIL_CLICK, contact)
    fresh = [world.add_contact() for _ in range(4)]
    for other in fresh:
        world.add_member(S.EMAIL_CLICK, other)
    world.run(S.EMAIL_CLICK)

    moved = world.assignment(contact)
    assert moved.outcome is AssignmentOutcome.REASSIGNED and moved.previousOwnerId == "101"
    assert world.hubspot_contact(contact)["properties"]["hubspot_owner_id"] == "102"
    assert {world.assignment(c).callAssignedTo for c in fresh} == {"102"}


def test_a_contact_unknown_to_hubspot_is_rejected_without_blocking_the_batch(
    world: World,
) -> None:
    world.add_rep("ana@acme.test", "101")
    ghost = world.add_contact(in_hubspot=False)
    real = world.add_contact()
    world.add_member(S.SUPPLIER, ghost)
    world.add_member(S.SUPPLIER, real)

    world.run(S.SUPPLIER)

    assert world.assignment(ghost).writeBackStatus is WriteBackStatus.REJECTED
    assert world.assignment(real).writeBackStatus is WriteBackStatus.DONE
    assert world.hubspot_contact(real)["properties"]["hubspot_owner_id"] == "101"


def test_write_back_goes_in_batches_of_at_most_100(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    contacts = [world.add_contact() for _ in range(230)]
    for contact in contacts:
        world.add_member(S.SUPPLIER, contact)

    world.run(S.SUPPLIER)

    sizes = [len(e.body["inputs"]) for e in world.hubspot.log.entries("contacts_batch_update")]
    assert sizes == [100, 100, 30]
    assert all(len(e.body) <= 100 for e in world.hubspot.log.entries("memberships_add"))
    assert len(world.list_members("L101")) == 230


def test_a_hubspot_failure_mid_batch_leaves_pending_write_backs_the_next_run_completes(
    world: World,
) -> None:
    world.add_rep("ana@acme.test", "101")
    world.add_rep("ben@acme.test", "102")
    contacts = [world.add_contact() for _ in range(250)]
    for contact in contacts:
        world.add_member(S.SUPPLIER, contact)
    # the second batch update fails on every attempt (the client retries once)
    world.hubspot.fail(500, endpoint="contacts_batch_update", nth=2, times=None)

    world.assign(S.SUPPLIER)
    failed = world.write_back()

    assert failed.written == 100 and failed.error and "500" in failed.error
    with world.sessions() as session:
        rows = session.scalars(select(ReengagementAssignment)).all()
    pending = [r for r in rows if r.writeBackStatus is WriteBackStatus.PENDING]
    assert len(pending) == 150
    # the failed batch carries the reason; the batch after it was not attempted
    assert sum(1 for r in pending if r.writeBackError and r.writeBackAttempts == 1) == 100
    assert len(world.tasks()) == 250  # every task has its write-back, done or pending
    assert all(r.followUpTaskId for r in rows)
    assert sum(world.hubspot_contact(c)["writes"] for c in contacts) == 100

    world.hubspot.faults.clear()
    completed = world.write_back()

    assert completed.written == 150 and completed.error is None
    for contact in contacts:
        local, remote = world.contact(contact), world.hubspot_contact(contact)
        assert remote["properties"]["hubspot_owner_id"] == local.hubspotOwnerId
        assert remote["properties"]["call_assigned_to"] == local.callAssignedTo
    assert len(world.list_members("L101")) + len(world.list_members("L102")) == 250


def test_the_owner_in_hubspot_decides_not_a_stale_local_copy(world: World) -> None:
    """A rep took the contact in HubSpot; our copy still says nobody owns it."""
    world.add_rep("ana@acme.test", "101")
    world.add_rep("ben@acme.test", "102")
    contact = world.add_contact()
    world.hubspot.set_contact(world.contact(contact).hubspotContactId, {"hubspot_owner_id": "102"})
    world.add_member(S.SUPPLIER, contact)

    world.run(S.SUPPLIER)

    assert world.assignment(contact).outcome is AssignmentOutcome.KEPT_OWNER
    assert world.hubspot_contact(contact)["properties"]["hubspot_owner_id"] == "102"
    assert world.contact(contact).hubspotOwnerId == "102"  # the local copy caught up


def test_an_owner_changed_in_hubspot_after_the_decision_is_not_overwritten(
    world: World,
) -> None:
    world.add_rep("ana@acme.test", "101")
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)
    world.assign(S.SUPPLIER)  # decided: reassign to 101; the write-back is pending
    hubspot_id = world.contact(contact).hubspotContactId
    world.hubspot.set_contact(hubspot_id, {"hubspot_owner_id": "555"})  # a person acted

    world.write_back()

    assert world.hubspot.contact(hubspot_id)["properties"]["hubspot_owner_id"] == "555"
    row = world.assignment(contact)
    assert row.writeBackStatus is WriteBackStatus.REJECTED
    assert "owner changed in HubSpot to 555" in row.writeBackError


def test_a_missing_rep_list_rejects_only_that_reps_enrolments(world: World) -> None:
    world.add_rep("ana@acme.test", "101", list_id="gone")  # a list deleted in HubSpot
    world.add_rep("ben@acme.test", "102")
    world.hubspot._lists.pop("gone")
    contacts = [world.add_contact() for _ in range(6)]
    for contact in contacts:
        world.add_member(S.SUPPLIER, contact)

    world.run(S.SUPPLIER)
    again = world.write_back()

    statuses = {world.assignment(c).callAssignedTo: world.assignment(c) for c in contacts}
    assert statuses["101"].writeBackStatus is WriteBackStatus.REJECTED
    assert "list gone refused" in statuses["101"].writeBackError
    assert statuses["102"].writeBackStatus is WriteBackStatus.DONE
    assert len(world.list_members("L102")) == 3
    assert again.written == again.rejected == 0  # nothing left blocking the queue
    # the owners were still written for everyone
    assert all(world.hubspot_contact(c)["properties"]["hubspot_owner_id"] for c in contacts)


def test_two_pending_write_backs_of_one_contact_do_not_block_each_other(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)
    world.assign(S.SUPPLIER)
    with world.sessions() as session:  # the first task is done; the contact comes back
        session.get(FollowUpTask, world.tasks(contact)[0].id).status = "COMPLETED"
    world.add_member(S.EMAIL_CLICK, contact)
    world.assign(S.EMAIL_CLICK)

    run = world.write_back()

    assert (run.written, run.rejected) == (1, 1)
    with world.sessions() as session:
        rows = session.scalars(
            select(ReengagementAssignment).order_by(ReengagementAssignment.id)
        ).all()
    assert rows[0].writeBackStatus is WriteBackStatus.REJECTED
    assert rows[0].writeBackError == f"superseded by assignment {rows[1].id}"
    assert rows[1].writeBackStatus is WriteBackStatus.DONE


def test_a_reps_without_list_get_no_enrolment_on_the_unassigned_list(world: World) -> None:
    world.add_rep("ana@acme.test", "101", list_id=None)
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)

    world.run(S.SUPPLIER)

    assert world.assignment(contact).listId is None
    assert world.list_members(UNASSIGNED_LIST) == []
    assert world.hubspot_contact(contact)["properties"]["hubspot_owner_id"] == "101"


def test_a_transient_failure_is_given_up_after_the_attempt_cap(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)
    world.assign(S.SUPPLIER)
    world.hubspot.fail(503, endpoint="contacts_batch_update", times=None)

    for _ in range(MAX_WRITE_BACK_ATTEMPTS):
        world.write_back()

    row = world.assignment(contact)
    assert row.writeBackStatus is WriteBackStatus.REJECTED
    assert row.writeBackAttempts == MAX_WRITE_BACK_ATTEMPTS
    assert row.writeBackError.startswith(f"gave up after {MAX_WRITE_BACK_ATTEMPTS} attempts")


def test_when_hubspot_cannot_say_who_owns_the_contacts_nothing_is_decided(
    world: World,
) -> None:
    world.add_rep("ana@acme.test", "101")
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)
    world.hubspot.fail(503, endpoint="contacts_batch_read", times=None)

    run = world.assign(S.SUPPLIER)

    assert run.error and run.processed == 0
    assert world.tasks() == [] and world.count(ReengagementAssignment) == 0
    world.hubspot.faults.clear()
    assert world.assign(S.SUPPLIER).outcomes == {"reassigned": 1}
