"""Escalating stale follow-up tasks (docs/ownership.md, "Escalation"): the message names the
rep and the contact, the log masks the email, stage k is reached k days overdue and never past 3,
an undelivered message is sent again next time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from morpheus_pipelines.crm.models import (
    FollowUpTask,
    FollowUpTaskStatus,
    FollowUpTaskType,
    SalesRep,
)
from morpheus_pipelines.crm.steps.follow_up_escalation import escalate_stale_tasks
from morpheus_pipelines.resources.notifier import NotifierResource
from tests.support.events import EventLines
from tests.support.ownership import World
from tests.support.webhook import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _task(world: World, contact: int, rep: int | None, *, days_overdue: float, stage=0) -> int:
    with world.sessions() as session:
        task = FollowUpTask(
            subscriptionId=world.subscription_id,
            contactId=contact,
            salesRepId=rep,
            type=FollowUpTaskType.CALL,
            status=FollowUpTaskStatus.PENDING,
            dueAt=datetime.now(UTC) - timedelta(days=days_overdue),
            escalationStage=stage,
        )
        session.add(task)
        session.flush()
        return task.id


def _stage(world: World, task_id: int) -> int:
    with world.sessions() as session:
        return session.get(FollowUpTask, task_id).escalationStage


def _escalate(world: World, url: str, *, now: datetime | None = None):
    notifier = NotifierResource(webhook_url=url)
    return escalate_stale_tasks(
        world.sessions,
        world.subscription_id,
        lambda text, fields: notifier.notify("follow_up_escalation", text, **fields),
        now=now or datetime.now(UTC),
    )


def test_a_stale_task_is_escalated_naming_rep_and_contact_with_the_email_masked_in_logs(
    world: World, receiver: Receiver, event_lines: EventLines
) -> None:
    rep = world.add_rep("ana@acme.test", "101")
    with world.sessions() as session:
        session.get(SalesRep, rep).firstName = "Ana"
    contact = world.add_contact()
    email = world.contact(contact).email
    task = _task(world, contact, rep, days_overdue=1.5)
    fresh = _task(world, world.add_contact(), rep, days_overdue=0.5)

    run = _escalate(world, receiver.url)

    assert (run.escalated, run.by_stage) == (1, {1: 1})
    assert (_stage(world, task), _stage(world, fresh)) == (1, 0)
    [post] = receiver.posts
    assert "Ana" in post["text"] and email in post["text"] and f"#{task}" in post["text"]
    assert "Escalation 1 of 3" in post["text"]
    [alert] = event_lines.events("alert")
    assert alert["alert"] == "follow_up_escalation"
    assert email not in json.dumps(alert) and "p***@customer.example" in alert["summary"]


def test_one_escalation_per_day_overdue_and_never_past_stage_three(
    world: World, receiver: Receiver
) -> None:
    contact = world.add_contact()
    task = _task(world, contact, None, days_overdue=1.5)

    assert _escalate(world, receiver.url).escalated == 1
    assert _escalate(world, receiver.url).escalated == 0  # stage 2 waits for 2 days overdue
    assert _stage(world, task) == 1

    later = datetime.now(UTC) + timedelta(days=10)
    for _ in range(5):
        _escalate(world, receiver.url, now=later)
    assert _stage(world, task) == 3
    assert len(receiver.posts) == 3
    assert "nobody (unassigned)" in receiver.posts[0]["text"]


def test_an_undelivered_escalation_keeps_its_stage_and_is_sent_next_time(
    world: World, receiver: Receiver
) -> None:
    task = _task(world, world.add_contact(), None, days_overdue=1.2)

    dead = _escalate(world, "http://127.0.0.1:9/hook")  # nothing listens on port 9

    assert (dead.escalated, dead.undelivered) == (0, 1)
    assert _stage(world, task) == 0
    assert _escalate(world, receiver.url).escalated == 1
    assert _stage(world, task) == 1


def test_completed_and_cancelled_tasks_are_never_escalated(
    world: World, receiver: Receiver
) -> None:
    for status in (FollowUpTaskStatus.COMPLETED, FollowUpTaskStatus.CANCELLED):
        task = _task(world, world.add_contact(), None, days_overdue=5)
        with world.sessions() as session:
            session.get(FollowUpTask, task).status = status
    assert _escalate(world, receiver.url).stale == 0
    assert receiver.posts == []
