"""Eight segment runs of one subscription at once (docs/ownership.md, "The lock"): every
member is processed once, every contact gets one task, the rotation stays fair."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from morpheus_pipelines.crm.models import (
    AssignmentOutcome,
    ReengagementAssignment,
    ReengagementSegment,
    ReengagementSegmentMember,
)
from morpheus_pipelines.crm.repositories.reengagement import ReengagementAssignmentRepository
from tests.support.ownership import World

S = ReengagementSegment
RUNS = [
    S.EMAIL_CLICK,
    S.SUPPLIER,
    S.EMAIL_CLICK,
    S.SUPPLIER,
    S.NO_SHOW,
    S.LOST_DEAL,
    S.CAMPAIGN_TARGET,
    S.SUPPLIER,
]


def test_eight_concurrent_segment_runs_assign_each_contact_once_and_fairly(world: World) -> None:
    reps = [world.add_rep(f"rep{i}@acme.test", str(200 + i)) for i in range(5)]
    contacts = [world.add_contact() for _ in range(300)]
    segments = [S.EMAIL_CLICK, S.SUPPLIER, S.NO_SHOW, S.LOST_DEAL, S.CAMPAIGN_TARGET]
    for i, contact in enumerate(contacts):
        world.add_member(segments[i % 5], contact)
        if i % 3 == 0:  # a third of the contacts is in a second segment too
            world.add_member(segments[(i + 1) % 5], contact)
    start = threading.Barrier(len(RUNS))
    errors: list[BaseException] = []

    def run(segment: S) -> None:
        try:
            start.wait()
            world.assign(segment, batch_size=15)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(segment,)) for segment in RUNS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    with world.sessions() as session:
        members = session.scalars(select(ReengagementSegmentMember.id)).all()
        rows = session.scalars(select(ReengagementAssignment)).all()
    assert sorted(r.memberId for r in rows) == sorted(members)  # each member exactly once
    tasks = Counter(t.contactId for t in world.tasks())
    assert set(tasks) == set(contacts) and set(tasks.values()) == {1}
    rotated = Counter(r.contactId for r in rows if r.outcome is AssignmentOutcome.REASSIGNED)
    assert set(rotated.values()) == {1}  # nobody reassigned twice
    per_rep = world.round_robin_counts()
    assert set(per_rep) == set(reps)
    assert max(per_rep.values()) - min(per_rep.values()) <= 1, per_rep


def test_the_schema_refuses_a_member_processed_twice(world: World) -> None:
    """The guard behind "once": without the unique memberId, this second row would exist."""
    world.add_rep("ana@acme.test", "101")
    contact = world.add_contact()
    world.add_member(S.SUPPLIER, contact)
    world.run(S.SUPPLIER)
    first = world.assignment(contact)
    duplicate = {
        "subscriptionId": world.subscription_id,
        "memberId": first.memberId,
        "segment": S.SUPPLIER,
        "contactId": contact,
        "outcome": AssignmentOutcome.REASSIGNED,
        "writeBackStatus": "pending",
    }
    with (
        pytest.raises(IntegrityError, match="uq_reengagement_assignments_memberId"),
        world.sessions() as session,
    ):
        ReengagementAssignmentRepository().record(session, [duplicate])
