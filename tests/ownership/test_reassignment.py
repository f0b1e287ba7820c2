"""The ownership block (docs/ownership.md): every row of the reassignment table, deal-owner
routing, one reservation per batch and the Nooks fallback, against the real warehouse."""

from __future__ import annotations

import pytest

from morpheus_pipelines.crm.models import AssignmentOutcome, ReengagementSegment
from morpheus_pipelines.crm.repositories.configs import ConfigsRepository
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import dialer_rr_config_key
from morpheus_pipelines.crm.rules.ownership import (
    DIALER_FALLBACK_HUBSPOT_OWNER_ID,
    SEGMENT_POLICIES,
    NoRepAvailable,
    OwnershipRequest,
)
from morpheus_pipelines.crm.steps.ownership import decide_ownership, needs_owner
from tests.support.ownership import World

reps = SalesRepRepository()
EMAIL_CLICK = SEGMENT_POLICIES[ReengagementSegment.EMAIL_CLICK]
NO_SHOW = SEGMENT_POLICIES[ReengagementSegment.NO_SHOW]
DIALER = SEGMENT_POLICIES[ReengagementSegment.DIALER_CALL_ENDED]
CAMPAIGN = SEGMENT_POLICIES[ReengagementSegment.CAMPAIGN_TARGET]


def _decide(world: World, policy, requests):
    with world.sessions() as session:
        return decide_ownership(
            session, world.subscription_id, policy, requests, sales_rep_repo=reps
        )


@pytest.fixture
def staffed(world: World) -> World:
    """Two active reps (owners 101, 102), a deactivated one (owner 90)."""
    world.add_rep("ana@acme.test", "101")
    world.add_rep("ben@acme.test", "102")
    world.add_rep("gone@acme.test", "90", active=False)
    return world


@pytest.mark.parametrize(
    ("current_owner", "case"),
    [
        (None, "no owner"),
        ("", "empty owner"),
        (DIALER_FALLBACK_HUBSPOT_OWNER_ID, "the AI fallback owner"),
        ("90", "a deactivated rep"),
        ("555", "an owner who is not a rep at all (departed)"),
    ],
)
def test_a_contact_without_a_real_active_owner_is_reassigned_with_both_properties(
    staffed: World, current_owner: str | None, case: str
) -> None:
    [decision] = _decide(staffed, EMAIL_CLICK, [OwnershipRequest(1, current_owner)])
    assert decision.outcome is AssignmentOutcome.REASSIGNED, case
    assert decision.round_robin
    assert decision.hubspot_owner_id == decision.call_assigned_to == "101"
    with staffed.sessions() as session:
        assert needs_owner(session, current_owner, staffed.subscription_id, sales_rep_repo=reps)


def test_an_active_reps_contact_is_left_alone_and_nothing_is_written(
    staffed: World,
) -> None:
    [decision] = _decide(staffed, EMAIL_CLICK, [OwnershipRequest(1, "102")])
    assert decision.outcome is AssignmentOutcome.KEPT_OWNER
    assert decision.hubspot_owner_id is None  # the guard: automation never takes it
    assert decision.call_assigned_to is None  # "leave it alone" writes nothing
    assert not decision.writes_properties
    assert not decision.round_robin
    with staffed.sessions() as session:
        assert not needs_owner(session, "102", staffed.subscription_id, sales_rep_repo=reps)
        # nothing was reserved: the cursor never moved
        key = dialer_rr_config_key(staffed.subscription_id)
        assert ConfigsRepository().get_value(session, key) is None


def test_an_owner_active_in_another_subscription_is_not_an_owner_here(
    staffed: World, database_url: str, hubspot
) -> None:
    other = World(database_url, hubspot)
    other.add_rep("zoe@other.test", "777")
    [decision] = _decide(staffed, EMAIL_CLICK, [OwnershipRequest(1, "777")])
    assert decision.outcome is AssignmentOutcome.REASSIGNED


def test_deal_owner_routing_writes_call_assigned_to_only_whoever_owns_the_record(
    staffed: World,
) -> None:
    kept, ownerless, ai_owned = _decide(
        staffed,
        NO_SHOW,
        [
            OwnershipRequest(1, current_owner="101", deal_owner="102"),
            OwnershipRequest(2, current_owner=None, deal_owner="102"),
            OwnershipRequest(3, current_owner=DIALER_FALLBACK_HUBSPOT_OWNER_ID, deal_owner="102"),
        ],
    )
    for decision in (kept, ownerless, ai_owned):
        assert decision.outcome is AssignmentOutcome.DEAL_OWNER
        assert decision.call_assigned_to == "102"
        assert not decision.round_robin
    # hubspot_owner_id is never this routing's to write, not even on a record nobody owns
    assert kept.hubspot_owner_id is ownerless.hubspot_owner_id is ai_owned.hubspot_owner_id is None
    with staffed.sessions() as session:  # and no rotation slot was spent on them
        key = dialer_rr_config_key(staffed.subscription_id)
        assert ConfigsRepository().get_value(session, key) is None


def test_a_departed_deal_owner_falls_through_to_the_reassignment_test(staffed: World) -> None:
    kept, rotated = _decide(
        staffed,
        NO_SHOW,
        [
            OwnershipRequest(1, current_owner="102", deal_owner="90"),
            OwnershipRequest(2, current_owner=None, deal_owner="90"),
        ],
    )
    assert kept.outcome is AssignmentOutcome.KEPT_OWNER and kept.hubspot_owner_id is None
    assert rotated.outcome is AssignmentOutcome.REASSIGNED
    assert rotated.hubspot_owner_id == rotated.call_assigned_to == "101"


def test_segments_without_deal_routing_ignore_a_deal_owner(staffed: World) -> None:
    [decision] = _decide(staffed, EMAIL_CLICK, [OwnershipRequest(1, None, deal_owner="102")])
    assert decision.outcome is AssignmentOutcome.REASSIGNED


def test_a_batch_reserves_once_and_gets_consecutive_slots(staffed: World) -> None:
    requests = [OwnershipRequest(i, None) for i in range(5)] + [OwnershipRequest(9, "101")]
    decisions = _decide(staffed, EMAIL_CLICK, requests)
    assert [d.call_assigned_to for d in decisions] == ["101", "102", "101", "102", "101", None]
    assert decisions[-1].rep is not None and decisions[-1].rep.hubspotOwnerId == "101"
    with staffed.sessions() as session:
        cursor = ConfigsRepository().get_value(
            session, dialer_rr_config_key(staffed.subscription_id)
        )
    assert cursor == "5"  # one reservation of five, not six single picks


def test_the_dialer_prefers_reps_with_nooks(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    world.add_rep("nia@acme.test", "103", nooks="nooks-3")
    decisions = _decide(world, DIALER, [OwnershipRequest(i, None) for i in range(3)])
    assert {d.call_assigned_to for d in decisions} == {"103"}
    # every other segment ignores Nooks
    decisions = _decide(world, EMAIL_CLICK, [OwnershipRequest(i, None) for i in range(2)])
    assert {d.call_assigned_to for d in decisions} == {"101", "103"}


def test_the_dialer_falls_back_to_reps_without_nooks_then_to_the_ai_owner(world: World) -> None:
    world.add_rep("ana@acme.test", "101")
    [decision] = _decide(world, DIALER, [OwnershipRequest(1, None)])
    assert decision.outcome is AssignmentOutcome.REASSIGNED
    assert decision.call_assigned_to == "101"

    with world.sessions() as session:
        for rep in reps.list_active_for_subscription(session, world.subscription_id):
            reps.update(session, rep, {"isActive": False})
    [decision] = _decide(world, DIALER, [OwnershipRequest(1, None)])
    assert decision.outcome is AssignmentOutcome.FALLBACK_OWNER
    assert decision.rep is None
    assert (
        decision.hubspot_owner_id == decision.call_assigned_to == DIALER_FALLBACK_HUBSPOT_OWNER_ID
    )


def test_no_rep_leaves_the_enrolling_segments_unassigned(world: World) -> None:
    for segment in ("email_click", "supplier", "no_show", "lost_deal"):
        policy = SEGMENT_POLICIES[ReengagementSegment(segment)]
        [decision] = _decide(world, policy, [OwnershipRequest(1, None)])
        assert decision.outcome is AssignmentOutcome.UNASSIGNED, segment
        assert not decision.writes_properties


def test_no_rep_aborts_a_campaign_target_batch_but_not_one_that_needs_nobody(
    world: World,
) -> None:
    with pytest.raises(NoRepAvailable, match="campaign_target batch of 1 aborted"):
        _decide(world, CAMPAIGN, [OwnershipRequest(1, None)])
    # a batch whose contacts all keep their owner never needed the rotation
    world.add_rep("ana@acme.test", "101", active=True)
    [decision] = _decide(world, CAMPAIGN, [OwnershipRequest(1, "101")])
    assert decision.outcome is AssignmentOutcome.KEPT_OWNER
