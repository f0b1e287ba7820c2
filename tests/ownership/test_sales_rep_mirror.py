"""The ``sales_reps`` mirror of ``GET /crm/v3/owners`` (docs/ownership.md, "The sales-rep
mirror"), through the emulator into the real warehouse."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from morpheus_pipelines.crm.models import SalesRep
from morpheus_pipelines.crm.steps.sales_rep_mirror import UnknownSubscription, mirror_owners
from tests.support.ownership import World


def _owners(count: int, *, start: int = 0, archived: bool = False) -> list[dict]:
    return [
        {
            "id": str(5000 + i),
            "email": f"Rep{i}@Acme.test",
            "firstName": f"Rep{i}",
            "archived": archived,
        }
        for i in range(start, start + count)
    ]


def _reps(world: World) -> dict[str, SalesRep]:
    with world.sessions() as session:
        rows = session.scalars(
            select(SalesRep).where(SalesRep.subscriptionId == world.subscription_id)
        )
        return {rep.email: rep for rep in rows}


def _mirror(world: World, **client_options):
    with world.client(**client_options) as client:
        return mirror_owners(client, world.sessions, world.subscription_id)


def test_every_page_of_active_and_archived_owners_is_mirrored(world: World) -> None:
    world.hubspot.set_owners(_owners(1_100) + _owners(3, start=2_000, archived=True))

    outcome = _mirror(world)

    assert outcome.succeeded
    pages = [e.query for e in world.hubspot.log.entries("owners")]
    assert len(pages) == 4  # 500 + 500 + 100 active, then one archived page
    reps = _reps(world)
    assert len(reps) == 1_103
    assert reps["rep0@acme.test"].hubspotOwnerId == "5000"  # matched on the lower-cased email
    assert reps["rep2000@acme.test"].isActive is False
    assert outcome.counts["inserted"] == 1_103


def test_ours_is_kept_theirs_follows_hubspot_and_nobody_is_deleted(world: World) -> None:
    kept = world.add_rep("rep0@acme.test", "old-id", nooks="nooks-0", list_id="L-0")
    profile = uuid.uuid4()
    with world.sessions() as session:
        session.get(SalesRep, kept).profileId = profile
    gone = world.add_rep("left@acme.test", "4000", in_hubspot=False)
    world.hubspot.set_owners(_owners(2))

    outcome = _mirror(world)

    reps = _reps(world)
    rep0 = reps["rep0@acme.test"]
    assert (rep0.hubspotOwnerId, rep0.firstName, rep0.isActive) == ("5000", "Rep0", True)
    assert (rep0.nooksUserId, rep0.activeListId, rep0.profileId) == ("nooks-0", "L-0", profile)
    assert reps["left@acme.test"].isActive is False and reps["left@acme.test"].id == gone
    assert outcome.counts == {
        "inserted": 1,
        "updated": 1,
        "reactivated": 0,
        "deactivated": 1,
        "unchanged": 0,
    }


def test_archiving_an_owner_deactivates_the_rep_and_restoring_reactivates_it(
    world: World,
) -> None:
    world.hubspot.set_owners(_owners(3))
    _mirror(world)
    world.hubspot.set_owner_archived("5001")
    assert _mirror(world).counts["deactivated"] == 1
    assert _reps(world)["rep1@acme.test"].isActive is False

    world.hubspot.set_owner_archived("5001", archived=False)
    assert _mirror(world).counts == {
        "inserted": 0,
        "updated": 0,
        "reactivated": 1,
        "deactivated": 0,
        "unchanged": 2,
    }


def test_a_failed_page_changes_nothing(world: World) -> None:
    world.hubspot.set_owners(_owners(3))
    _mirror(world)
    before = {e: (r.hubspotOwnerId, r.isActive) for e, r in _reps(world).items()}
    world.hubspot.set_owners(_owners(1_000, start=100))  # everyone replaced: a big change
    world.hubspot.fail(503, endpoint="owners", page=1, times=None)

    outcome = _mirror(world)

    assert not outcome.succeeded and "503" in outcome.error
    assert {e: (r.hubspotOwnerId, r.isActive) for e, r in _reps(world).items()} == before


def test_a_token_never_appears_in_the_error(world: World) -> None:
    world.hubspot.unauthorized(endpoint="owners", times=None)
    with world.client() as client:
        client._session.headers["Authorization"] = "Bearer pat-na1-secret-value"
        outcome = mirror_owners(client, world.sessions, world.subscription_id)
    assert not outcome.succeeded and "401" in outcome.error
    assert "pat-na1" not in outcome.error


def test_an_unknown_subscription_is_named_in_the_error(world: World) -> None:
    stranger = uuid.uuid4()
    with world.client() as client, pytest.raises(UnknownSubscription, match=str(stranger)):
        mirror_owners(client, world.sessions, stranger)


def test_the_ai_owner_is_never_mirrored_as_a_rep(world: World) -> None:
    """The portal lists the AI dialer as an owner; as a rep it would take people's calls."""
    world.hubspot.set_owners([*_owners(1), {"id": "86817215", "email": "ai@acme.test"}])
    outcome = _mirror(world)
    assert outcome.not_human == 1
    assert set(_reps(world)) == {"rep0@acme.test"}
