"""The HubSpot outbox for the reps' work (docs/hubspot-outbox.md): follow-up tasks, AI calls,
escalations, tasks completed in HubSpot, call lists and the reps' own lists, written by the
drain to the HubSpot emulator over real HTTP, on the real warehouse."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from morpheus_pipelines.crm.models import (
    Activity,
    ActivityType,
    FollowUpTask,
    FollowUpTaskStatus,
    HubSpotOutboxRow,
    ReengagementSegment,
    SalesRep,
)
from morpheus_pipelines.crm.rules.hubspot_outbox import call_list_name, rep_list_name
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.steps.call_lists import refresh_call_lists
from morpheus_pipelines.crm.steps.engagement_sync import sync_engagements
from morpheus_pipelines.crm.steps.follow_up_escalation import escalate_stale_tasks
from morpheus_pipelines.crm.steps.hubspot_outbox import DrainReport, drain_outbox
from morpheus_pipelines.crm.steps.hubspot_task_sync import sync_task_completions
from morpheus_pipelines.crm.steps.sales_rep_mirror import mirror_owners
from morpheus_pipelines.db.session import get_session
from tests.support.ownership import World

S = ReengagementSegment
TIMEZONE = "Asia/Shanghai"


def _drain(world: World) -> DrainReport:
    with world.client(sleep=lambda _: None) as client:
        return drain_outbox(world.sessions, client, world.subscription_id)


def _assigned_task(world: World, segment: S = S.SUPPLIER) -> tuple[int, int]:
    """A contact of ``segment`` assigned to a new rep (owner 101): (contact id, task id)."""
    world.add_rep("ana@acme.test", "101")
    contact = world.add_contact(owner=DIALER_FALLBACK_HUBSPOT_OWNER_ID)
    world.add_member(segment, contact)
    world.assign(segment)
    [task] = world.tasks(contact)
    return contact, task.id


def _hubspot_task(world: World, task_id: int) -> tuple[str, dict[str, Any]]:
    [(hubspot_id, task)] = [
        (object_id, task)
        for object_id, task in world.hubspot.tasks().items()
        if task["properties"].get("morpheus_intent_key") == f"task:{task_id}"
    ]
    return hubspot_id, task["properties"]


def test_a_follow_up_task_becomes_a_hubspot_task_of_its_rep_on_its_contact(world: World) -> None:
    contact, task_id = _assigned_task(world)

    report = _drain(world)

    assert report.written["task"] == 1
    hubspot_id, properties = _hubspot_task(world, task_id)
    assert properties["hubspot_owner_id"] == "101"
    assert properties["hs_task_status"] == "NOT_STARTED"
    assert properties["hs_task_type"] == "CALL"
    contact_hubspot_id = world.contact(contact).hubspotContactId
    assert world.hubspot.associations("tasks", "contacts")[hubspot_id] == {contact_hubspot_id}
    [task] = world.tasks(contact)
    assert task.hubspotTaskId == hubspot_id


def test_a_task_whose_answer_was_lost_is_one_hubspot_task(world: World) -> None:
    _, task_id = _assigned_task(world)
    world.hubspot.lose_answer("tasks_batch_upsert")

    report = _drain(world)

    assert report.written["task"] == 1
    assert len(world.hubspot.log.statuses("tasks_batch_upsert")) == 2
    assert len(world.hubspot.tasks()) == 1
    _hubspot_task(world, task_id)


def test_an_ai_call_is_a_hubspot_call_of_the_dialer_and_appears_once_on_the_timeline(
    world: World,
) -> None:
    contact, _ = _assigned_task(world, S.DIALER_CALL_ENDED)

    report = _drain(world)

    assert report.written["call"] == 1
    [(call_id, call)] = world.hubspot.calls().items()
    assert call["properties"]["hubspot_owner_id"] == DIALER_FALLBACK_HUBSPOT_OWNER_ID
    contact_hubspot_id = world.contact(contact).hubspotContactId
    assert world.hubspot.associations("calls", "contacts")[call_id] == {contact_hubspot_id}
    with world.client() as client:  # the engagement sync reads HubSpot's calls back
        sync_engagements(client, world.sessions, world.subscription_id)
    with get_session(world.url) as session:
        calls = list(
            session.scalars(
                select(Activity).where(
                    Activity.subscriptionId == world.subscription_id,
                    Activity.type == ActivityType.CALL,
                )
            )
        )
    assert [a.hubspotEngagementId for a in calls] == [call_id]


def test_an_escalated_task_is_high_priority_in_hubspot(world: World) -> None:
    _, task_id = _assigned_task(world)
    _drain(world)
    with get_session(world.url) as session:  # the task went stale three days ago
        session.execute(update(FollowUpTask).values(dueAt=datetime.now(UTC) - timedelta(days=3)))
    sent: list[str] = []

    def notify(text: str, fields: dict[str, Any]) -> bool:
        sent.append(text)
        return True

    run = escalate_stale_tasks(world.sessions, world.subscription_id, notify, now=datetime.now(UTC))

    assert run.escalated == 1 and sent
    assert _drain(world).written["task"] == 1
    _, properties = _hubspot_task(world, task_id)
    assert properties["hs_task_priority"] == "HIGH"
    assert len(world.hubspot.tasks()) == 1


def test_a_task_completed_in_hubspot_is_completed_here_once(world: World) -> None:
    contact, task_id = _assigned_task(world)
    _drain(world)
    hubspot_id, _ = _hubspot_task(world, task_id)
    world.hubspot.complete_task(hubspot_id)

    with world.client() as client:
        first = sync_task_completions(client, world.sessions, world.subscription_id)
        second = sync_task_completions(client, world.sessions, world.subscription_id)

    assert (first.completed_in_hubspot, first.completed_here) == (1, 1)
    assert second.completed_here == 0
    [task] = world.tasks(contact)
    assert task.status is FollowUpTaskStatus.COMPLETED


def test_a_task_open_in_hubspot_stays_open_here(world: World) -> None:
    contact, _ = _assigned_task(world)
    _drain(world)
    with world.client() as client:
        sync = sync_task_completions(client, world.sessions, world.subscription_id)
    assert (sync.read, sync.completed_here) == (1, 0)
    [task] = world.tasks(contact)
    assert task.status is FollowUpTaskStatus.PENDING


def _tomorrow() -> date:
    return (datetime.now(UTC) + timedelta(days=1)).date() + timedelta(days=1)


def test_the_daily_call_list_holds_the_reps_due_contacts_and_is_refreshed_once_a_day(
    world: World,
) -> None:
    contact, _ = _assigned_task(world)
    with get_session(world.url) as session:
        session.execute(update(SalesRep).values(hubspotCallSegmentId="CL-101"))
    world.hubspot.set_contact("999", {"email": "yesterday@customer.example"})
    world.hubspot.set_list("CL-101", name="Ana's calls", object_type_id="0-1", members=["999"])

    refresh = refresh_call_lists(world.sessions, world.subscription_id, _tomorrow(), TIMEZONE)
    again = refresh_call_lists(world.sessions, world.subscription_id, _tomorrow(), TIMEZONE)
    _drain(world)

    assert (refresh.contacts, refresh.queued, again.queued) == (1, 1, 0)
    assert world.list_members("CL-101") == [world.contact(contact).hubspotContactId]


def test_a_rep_without_a_call_list_gets_one_created_and_stored(world: World) -> None:
    _assigned_task(world)
    refresh_call_lists(world.sessions, world.subscription_id, _tomorrow(), TIMEZONE)
    _drain(world)
    created = world.hubspot.list_by_name(call_list_name("ana@acme.test"))
    assert created is not None
    with get_session(world.url) as session:
        assert session.scalar(select(SalesRep.hubspotCallSegmentId)) == created


def test_a_rep_who_leaves_has_their_call_list_emptied_at_once(world: World) -> None:
    _assigned_task(world)
    with get_session(world.url) as session:
        session.execute(update(SalesRep).values(hubspotCallSegmentId="CL-101"))
    world.hubspot.set_list("CL-101", name="Ana's calls", object_type_id="0-1")
    refresh_call_lists(world.sessions, world.subscription_id, _tomorrow(), TIMEZONE)
    _drain(world)
    assert world.list_members("CL-101")

    world.hubspot.set_owner_archived("101")
    with world.client() as client:
        mirror = mirror_owners(client, world.sessions, world.subscription_id)
    _drain(world)

    assert mirror.counts["deactivated"] == 1
    assert world.list_members("CL-101") == []


def test_a_rep_the_mirror_creates_gets_their_own_list_once(world: World) -> None:
    owners = world.hubspot.to_data()["owners"]
    world.hubspot.set_owners([*owners, {"id": "305", "email": "new@acme.test"}])

    for _ in range(2):
        with world.client() as client:
            mirror_owners(client, world.sessions, world.subscription_id)
        _drain(world)

    name = rep_list_name("new@acme.test")
    created = world.hubspot.list_by_name(name)
    assert created is not None
    with get_session(world.url) as session:
        rep = session.scalars(select(SalesRep).where(SalesRep.email == "new@acme.test")).one()
        assert rep.activeListId == created
        rows = session.scalars(
            select(HubSpotOutboxRow).where(HubSpotOutboxRow.salesRepId == rep.id)
        ).all()
    assert [row.kind for row in rows] == ["rep_list"]
    assert len(world.hubspot.log.statuses("lists_create")) == 1
