"""CallRepository, the dialer sync's ``upsert`` of calls, and CampaignTargetRepository's
upsert of targets, through the column lists production uses (docs/data-layer.md, "The CRM
tables")."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy.exc import InvalidRequestError

from morpheus_pipelines.crm.repositories.call import (
    DIALER_UPDATE_COLUMNS,
    CallRepository,
    CampaignTargetRepository,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.store.base import RepositoryError
from tests.support.crm import new_subscription

calls = CallRepository()
targets = CampaignTargetRepository()
T0 = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)


def _target(sub: uuid.UUID, hubspot_contact_id: str, **overrides: object) -> dict:
    row: dict = {
        "subscriptionId": sub,
        "campaignId": "camp-1",
        "hubspotContactId": hubspot_contact_id,
        "name": f"Target {hubspot_contact_id}",
    }
    row.update(overrides)
    return row


def _call_with_target(database_url: str, sub: uuid.UUID, provider_call_id: str) -> tuple[int, int]:
    with get_session(database_url) as session:
        target = targets.insert(session, _target(sub, f"hs-{provider_call_id}"))
        call = calls.insert(
            session,
            {"subscriptionId": sub, "providerCallId": provider_call_id, "targetId": target.id},
        )
        return call.id, target.id


def test_get_by_provider_call_id(database_url: str) -> None:
    sub = new_subscription(database_url)
    call_id, _ = _call_with_target(database_url, sub, "five9-1")
    with get_session(database_url) as session:
        assert calls.get_by_provider_call_id(session, "five9-1").id == call_id
        assert calls.get_by_provider_call_id(session, str(call_id)) is None


def test_get_with_target_for_subscription_loads_the_target(database_url: str) -> None:
    sub = new_subscription(database_url)
    call_id, target_id = _call_with_target(database_url, sub, "five9-1")
    with get_session(database_url) as session:
        call = calls.get_with_target_for_subscription(session, call_id, sub)
    # The session is closed and the relationship is lazy="raise": only an eager load works.
    assert call.target.id == target_id
    assert call.target.name == "Target hs-five9-1"


def test_without_the_eager_load_the_target_is_not_readable(database_url: str) -> None:
    """Why the get_with_target_* methods exist: a plain fetch leaves ``target`` unloaded."""
    sub = new_subscription(database_url)
    call_id, _ = _call_with_target(database_url, sub, "five9-1")
    with get_session(database_url) as session:
        call = calls.get_by_id(session, call_id)
    with pytest.raises(InvalidRequestError, match="raise"):
        _ = call.target


def test_get_with_target_in_the_session_that_wrote_the_call(database_url: str) -> None:
    """The call is already in the identity map with ``target`` unloaded; the eager load
    still fills it in."""
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        target = targets.insert(session, _target(sub, "hs-1"))
        call = calls.insert(
            session, {"subscriptionId": sub, "providerCallId": "p", "targetId": target.id}
        )
        found = calls.get_with_target_for_subscription(session, call.id, sub)
    assert found is call
    assert found.target.hubspotContactId == "hs-1"


def test_a_call_without_target_reads_as_none(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        call_id = calls.insert(session, {"subscriptionId": sub, "providerCallId": "solo"}).id
    with get_session(database_url) as session:
        call = calls.get_with_target_for_subscription(session, call_id, sub)
    assert call.target is None


def test_get_with_target_for_subscription_hides_other_tenants_calls(database_url: str) -> None:
    acme, globex = new_subscription(database_url, "acme"), new_subscription(database_url, "globex")
    call_id, target_id = _call_with_target(database_url, acme, "five9-1")
    with get_session(database_url) as session:
        assert calls.get_with_target_for_subscription(session, call_id, globex) is None
        assert calls.get_with_target_by_ids(session, call_id, target_id, globex) is None
        assert calls.get_with_target_for_subscription(session, call_id + 999, acme) is None


def test_get_with_target_by_ids_asserts_the_pair(database_url: str) -> None:
    sub = new_subscription(database_url)
    call_id, target_id = _call_with_target(database_url, sub, "five9-1")
    other_call_id, other_target_id = _call_with_target(database_url, sub, "five9-2")
    with get_session(database_url) as session:
        call = calls.get_with_target_by_ids(session, call_id, target_id, sub)
        # A webhook pairing a real call with another real target gets nothing.
        assert calls.get_with_target_by_ids(session, call_id, other_target_id, sub) is None
        assert calls.get_with_target_by_ids(session, other_call_id, target_id, sub) is None
    assert (call.id, call.target.id) == (call_id, target_id)


def _five9_call(sub: uuid.UUID, provider_call_id: str, **fields: object) -> dict:
    row: dict = dict.fromkeys(DIALER_UPDATE_COLUMNS)
    row.update({"subscriptionId": sub, "providerCallId": provider_call_id})
    row.update(fields)
    return row


def test_dialer_sync_upsert_on_provider_call_id(database_url: str) -> None:
    sub = new_subscription(database_url)
    call_id, target_id = _call_with_target(database_url, sub, "five9-1")
    with get_session(database_url) as session:
        updated = calls.upsert_from_dialer(
            session,
            _five9_call(
                sub,
                "five9-1",
                status="COMPLETED",
                disposition="Left voicemail",
                durationMs=61_500,
                durationSec=62,
                startTimestamp=T0,
                notes="call back Tuesday",
            ),
        )
        created = calls.upsert_from_dialer(
            session,
            _five9_call(sub, "five9-2", status="RINGING"),
        )
    assert updated.id == call_id
    assert (updated.status, updated.disposition, updated.durationMs) == (
        "COMPLETED",
        "Left voicemail",
        61_500,
    )
    assert updated.targetId == target_id  # not an update column: the link survives
    assert created.id != call_id
    with get_session(database_url) as session:
        assert len(calls.get_all(session)) == 2
        # Re-delivery of the same payload changes nothing and adds nothing.
        calls.upsert_from_dialer(session, _five9_call(sub, "five9-2", status="RINGING"))
        assert len(calls.get_all(session)) == 2


def test_campaign_target_upsert_through_the_repositorys_columns(database_url: str) -> None:
    sub = new_subscription(database_url)
    with get_session(database_url) as session:
        first = targets.upsert_target(session, _target(sub, "hs-1", status="NEW"))
    with get_session(database_url) as session:
        again = targets.upsert_target(
            session, _target(sub, "hs-1", status="CALLED", phone="+61400")
        )
        # Same person on another campaign: another row.
        other = targets.upsert_target(session, _target(sub, "hs-1", campaignId="camp-2"))
    assert again.id == first.id
    assert (again.status, again.phone) == ("CALLED", "+61400")
    assert again.createdAt == first.createdAt
    assert other.id != first.id
    with get_session(database_url) as session:
        assert len(targets.get_all(session)) == 2


def test_campaign_target_upsert_needs_the_real_unique_pair(database_url: str) -> None:
    sub = new_subscription(database_url)
    with (
        pytest.raises(RepositoryError, match=r"campaign_targets.*\['hubspotContactId'\]"),
        get_session(database_url) as session,
    ):
        targets.upsert(session, _target(sub, "hs-1"), conflict_columns=["hubspotContactId"])
