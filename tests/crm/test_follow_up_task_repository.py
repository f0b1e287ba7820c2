"""FollowUpTaskRepository against the real, migrated schema (docs/data-layer.md)."""

from __future__ import annotations

import inspect
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import (
    Contact,
    FollowUpTask,
    FollowUpTaskStatus,
    FollowUpTaskType,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.crm.repositories.follow_up_task import FollowUpTaskRepository
from morpheus_pipelines.db.session import get_session

repo = FollowUpTaskRepository()
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
Status = FollowUpTaskStatus
Type = FollowUpTaskType


@dataclass(frozen=True)
class World:
    subscription_id: uuid.UUID
    other_subscription_id: uuid.UUID
    contact_id: int
    other_contact_id: int
    rep_id: int
    other_rep_id: int


def _db_now(session: Session) -> datetime:
    """The transaction's ``now()``: the instant the repository compares against."""
    return session.scalar(select(func.now()))


def _world(session: Session) -> World:
    subscriptions = [Subscription(name="Acme"), Subscription(name="Other")]
    session.add_all(subscriptions)
    session.flush()
    sub, other = (s.id for s in subscriptions)
    contacts = [
        # contacts.email is unique across subscriptions: one address per world
        Contact(subscriptionId=sub, firstName="Jane", email=f"jane.{sub.hex[:8]}@example.com"),
        Contact(subscriptionId=sub, firstName="John"),
    ]
    reps = [
        SalesRep(subscriptionId=sub, email="rep@acme.test", firstName="Rita"),
        SalesRep(subscriptionId=sub, email="rep2@acme.test", firstName="Ron"),
    ]
    session.add_all([*contacts, *reps])
    session.flush()
    return World(sub, other, contacts[0].id, contacts[1].id, reps[0].id, reps[1].id)


def _task(world: World, due_at: datetime, **overrides: object) -> dict:
    row = {
        "subscriptionId": world.subscription_id,
        "contactId": world.contact_id,
        "salesRepId": world.rep_id,
        "type": Type.CALL,
        "status": Status.PENDING,
        "dueAt": due_at,
    }
    row.update(overrides)
    return row


def _insert(session: Session, world: World, due_at: datetime, **overrides: object) -> int:
    return repo.insert(session, _task(world, due_at, **overrides)).id


@pytest.fixture
def world(database_url: str) -> World:
    with get_session(database_url) as session:
        return _world(session)


def test_signatures_are_the_documented_ones() -> None:
    assert str(inspect.signature(repo.list_pending_due_soon)) == (
        "(session: 'Session', subscription_id: 'uuid.UUID', window_hours: 'int' = 24)"
        " -> 'list[FollowUpTask]'"
    )
    assert str(inspect.signature(repo.list_pending_with_hubspot_task)) == (
        "(session: 'Session', subscription_id: 'uuid.UUID', limit: 'int' = 50)"
        " -> 'list[FollowUpTask]'"
    )
    assert str(inspect.signature(repo.has_active_task_for_contact)) == (
        "(session: 'Session', *, contact_id: 'int', subscription_id: 'uuid.UUID', "
        "task_type: 'FollowUpTaskType' = <FollowUpTaskType.CALL: 'CALL'>) -> 'bool'"
    )
    assert str(inspect.signature(repo.list_stale_for_escalation)) == (
        "(session: 'Session', subscription_id: 'uuid.UUID') -> 'list[FollowUpTask]'"
    )


# -- list_pending_due_soon ------------------------------------------------------------------


def test_due_soon_lists_pending_tasks_before_the_horizon_overdue_included(
    database_url: str, world: World
) -> None:
    with get_session(database_url) as session:
        now = _db_now(session)
        overdue_long = _insert(session, world, now - 3 * DAY)
        overdue = _insert(session, world, now - 3 * HOUR)
        soon = _insert(session, world, now + 2 * HOUR, salesRepId=None)
        later = _insert(session, world, now + 30 * HOUR)
        _insert(session, world, now + HOUR, status=Status.COMPLETED)
        _insert(session, world, now + HOUR, status=Status.IN_PROGRESS)
        _insert(session, world, now + HOUR, status=Status.FAILED)
        _insert(session, world, now + HOUR, subscriptionId=world.other_subscription_id)
    with get_session(database_url) as session:
        default_window = repo.list_pending_due_soon(session, world.subscription_id)
        wide_window = repo.list_pending_due_soon(session, world.subscription_id, 48)
        narrow_window = repo.list_pending_due_soon(session, world.subscription_id, window_hours=1)
    # most overdue first
    assert [t.id for t in default_window] == [overdue_long, overdue, soon]
    assert [t.id for t in wide_window] == [overdue_long, overdue, soon, later]
    assert [t.id for t in narrow_window] == [overdue_long, overdue]


def test_due_soon_eager_loads_the_rep_but_not_the_contact(database_url: str, world: World) -> None:
    with get_session(database_url) as session:
        now = _db_now(session)
        _insert(session, world, now + HOUR)
        _insert(session, world, now + 2 * HOUR, salesRepId=None)
    with get_session(database_url) as session:
        with_rep, without_rep = repo.list_pending_due_soon(session, world.subscription_id)
    # The session is closed: the eager-loaded relationship is readable, the other one raises.
    assert with_rep.salesRep is not None
    assert with_rep.salesRep.email == "rep@acme.test"
    assert without_rep.salesRep is None
    with pytest.raises(InvalidRequestError, match="lazy='raise'"):
        _ = with_rep.contact


# -- list_pending_with_hubspot_task ---------------------------------------------------------


def test_pending_with_hubspot_task_lists_failed_first_then_by_due_then_id(
    database_url: str, world: World
) -> None:
    with get_session(database_url) as session:
        now = _db_now(session)
        pending_late = _insert(session, world, now + 5 * HOUR, hubspotTaskId="h1")
        failed_late = _insert(session, world, now + 9 * HOUR, hubspotTaskId="h2", status="FAILED")
        pending_early = _insert(session, world, now - HOUR, hubspotTaskId="h3")
        failed_early = _insert(session, world, now + HOUR, hubspotTaskId="h4", status="FAILED")
        pending_tie = _insert(session, world, now + 5 * HOUR, hubspotTaskId="h5")
        _insert(session, world, now, hubspotTaskId=None)
        _insert(session, world, now, hubspotTaskId=None, status=Status.FAILED)
        _insert(session, world, now, hubspotTaskId="h6", status=Status.COMPLETED)
        _insert(session, world, now, hubspotTaskId="h7", status=Status.IN_PROGRESS)
        _insert(session, world, now, hubspotTaskId="h8", status=Status.CANCELLED)
        _insert(session, world, now, hubspotTaskId="h9", subscriptionId=world.other_subscription_id)
    with get_session(database_url) as session:
        everything = repo.list_pending_with_hubspot_task(session, world.subscription_id)
        first_three = repo.list_pending_with_hubspot_task(session, world.subscription_id, 3)
        first_one = repo.list_pending_with_hubspot_task(session, world.subscription_id, limit=1)
    expected = [failed_early, failed_late, pending_early, pending_late, pending_tie]
    assert [t.id for t in everything] == expected
    assert [t.id for t in first_three] == expected[:3]
    assert [t.id for t in first_one] == [failed_early]


# -- has_active_task_for_contact ------------------------------------------------------------


@pytest.mark.parametrize("status", [Status.PENDING, Status.IN_PROGRESS])
def test_guard_is_true_for_an_active_task_not_past_due(
    database_url: str, world: World, status: FollowUpTaskStatus
) -> None:
    with get_session(database_url) as session:
        _insert(session, world, _db_now(session) + HOUR, status=status)
    with get_session(database_url) as session:
        assert repo.has_active_task_for_contact(
            session, contact_id=world.contact_id, subscription_id=world.subscription_id
        )


@pytest.mark.parametrize(
    ("overrides", "due_in"),
    [
        ({"status": Status.COMPLETED}, HOUR),
        ({"status": Status.FAILED}, HOUR),
        ({"status": Status.CANCELLED}, HOUR),
        ({}, -HOUR),  # past due
        ({"status": Status.IN_PROGRESS}, -HOUR),  # past due
        ({"type": Type.EMAIL}, HOUR),  # other type
        ({"type": Type.WHATSAPP}, HOUR),
        ({"subscriptionId": "other"}, HOUR),  # other subscription
        ({"contactId": "other"}, HOUR),  # other contact
    ],
    ids=[
        "completed",
        "failed",
        "cancelled",
        "pending-past-due",
        "in-progress-past-due",
        "email-type",
        "whatsapp-type",
        "other-subscription",
        "other-contact",
    ],
)
def test_guard_is_false_for_tasks_that_do_not_block_new_work(
    database_url: str, world: World, overrides: dict, due_in: timedelta
) -> None:
    if overrides.get("subscriptionId") == "other":
        overrides = {**overrides, "subscriptionId": world.other_subscription_id}
    if overrides.get("contactId") == "other":
        overrides = {**overrides, "contactId": world.other_contact_id}
    with get_session(database_url) as session:
        _insert(session, world, _db_now(session) + due_in, **overrides)
    with get_session(database_url) as session:
        assert not repo.has_active_task_for_contact(
            session, contact_id=world.contact_id, subscription_id=world.subscription_id
        )


def test_guard_honours_task_type_and_counts_a_task_due_exactly_now(
    database_url: str, world: World
) -> None:
    with get_session(database_url) as session:
        now = _db_now(session)
        _insert(session, world, now, type=Type.EMAIL)
        # Same transaction, same now(): due exactly now is not past due.
        assert repo.has_active_task_for_contact(
            session,
            contact_id=world.contact_id,
            subscription_id=world.subscription_id,
            task_type=Type.EMAIL,
        )
        assert not repo.has_active_task_for_contact(
            session, contact_id=world.contact_id, subscription_id=world.subscription_id
        )


TASKS = st.lists(
    st.tuples(
        st.sampled_from(list(Status)),
        st.sampled_from(list(Type)),
        st.integers(min_value=-72, max_value=72).filter(bool),  # hours from now, never 0
        st.booleans(),  # in the probed subscription?
        st.booleans(),  # about the probed contact?
    ),
    max_size=6,
)


@settings(
    max_examples=30,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(tasks=TASKS, probe_type=st.sampled_from(list(Type)))
def test_guard_matches_its_definition(
    database_url: str,
    tasks: list[tuple[FollowUpTaskStatus, FollowUpTaskType, int, bool, bool]],
    probe_type: FollowUpTaskType,
) -> None:
    # Every example builds its own subscriptions and contacts, so examples cannot interfere.
    with get_session(database_url) as session:
        world = _world(session)
        now = _db_now(session)
        for status, task_type, hours, same_sub, same_contact in tasks:
            _insert(
                session,
                world,
                now + hours * HOUR,
                status=status,
                type=task_type,
                subscriptionId=world.subscription_id if same_sub else world.other_subscription_id,
                contactId=world.contact_id if same_contact else world.other_contact_id,
            )
        found = repo.has_active_task_for_contact(
            session,
            contact_id=world.contact_id,
            subscription_id=world.subscription_id,
            task_type=probe_type,
        )
    expected = any(
        status in (Status.PENDING, Status.IN_PROGRESS)
        and task_type == probe_type
        and hours > 0
        and same_sub
        and same_contact
        for status, task_type, hours, same_sub, same_contact in tasks
    )
    assert found is expected


# -- list_stale_for_escalation ----------------------------------------------------------------


def test_stale_lists_pending_tasks_a_day_overdue_below_the_escalation_ceiling(
    database_url: str, world: World
) -> None:
    with get_session(database_url) as session:
        now = _db_now(session)
        exactly_a_day = _insert(session, world, now - DAY)
        older = _insert(session, world, now - 3 * DAY, escalationStage=2)
        old = _insert(session, world, now - 2 * DAY, escalationStage=1)
        _insert(session, world, now - 23 * HOUR)  # not a day overdue yet
        _insert(session, world, now + HOUR)  # not overdue
        _insert(session, world, now - 3 * DAY, escalationStage=3)  # escalated three times
        _insert(session, world, now - 3 * DAY, escalationStage=7)
        _insert(session, world, now - 3 * DAY, status=Status.IN_PROGRESS)
        _insert(session, world, now - 3 * DAY, status=Status.COMPLETED)
        _insert(session, world, now - 3 * DAY, status=Status.FAILED)
        _insert(session, world, now - 3 * DAY, subscriptionId=world.other_subscription_id)
        # Same transaction, same now(): due exactly a day ago is stale.
        in_transaction = repo.list_stale_for_escalation(session, world.subscription_id)
    assert [t.id for t in in_transaction] == [older, old, exactly_a_day]
    with get_session(database_url) as session:
        stale = repo.list_stale_for_escalation(session, world.subscription_id)
    assert [t.id for t in stale] == [older, old, exactly_a_day]


def test_stale_eager_loads_rep_and_contact_for_use_after_the_session(
    database_url: str, world: World
) -> None:
    with get_session(database_url) as session:
        now = _db_now(session)
        _insert(session, world, now - 3 * DAY)
        _insert(session, world, now - 2 * DAY, salesRepId=None, contactId=world.other_contact_id)
    with get_session(database_url) as session:
        first, second = repo.list_stale_for_escalation(session, world.subscription_id)
    # The session is closed; formatting an escalation message must not touch the database.
    assert f"{first.salesRep.firstName} <{first.salesRep.email}>" == "Rita <rep@acme.test>"
    assert first.contact.firstName == "Jane"
    assert first.contact.email == f"jane.{world.subscription_id.hex[:8]}@example.com"
    assert second.salesRep is None
    assert second.contact.firstName == "John"


def test_a_task_loaded_without_eager_loading_raises_on_its_relationships(
    database_url: str, world: World
) -> None:
    """The failure the eager loads prevent: ``lazy="raise"`` never issues a hidden query."""
    with get_session(database_url) as session:
        task_id = _insert(session, world, _db_now(session))
    with get_session(database_url) as session:
        task = repo.get_by_id(session, task_id)
        with pytest.raises(InvalidRequestError, match="lazy='raise'"):
            _ = task.salesRep
    assert isinstance(task, FollowUpTask)
    assert task.dueAt.tzinfo is not None  # scalars stay readable (expire_on_commit=False)
    assert task.dueAt <= datetime.now(UTC)
