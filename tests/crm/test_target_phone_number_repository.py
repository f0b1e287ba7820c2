"""TargetPhoneNumberRepository: the format-tolerant lookup and the Twilio Lookup work queue
(docs/data-layer.md)."""

from __future__ import annotations

import inspect
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from morpheus_pipelines.crm.models import TargetPhoneNumber
from morpheus_pipelines.crm.repositories.target_phone_number import (
    MIN_MATCH_DIGITS,
    TargetPhoneNumberRepository,
    significant_digits,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.settings import load_settings
from tests.support.crm import new_subscription

repo = TargetPhoneNumberRepository()
T0 = datetime(2026, 11, 30, 7, 30, tzinfo=UTC)
STORED = "+61 2 9999 0000"


@pytest.fixture
def subscription_id(database_url: str) -> uuid.UUID:
    return new_subscription(database_url)


def _number(subscription_id: uuid.UUID, phone: str, **overrides: object) -> dict:
    row = {"subscriptionId": subscription_id, "phoneNumber": phone}
    row.update(overrides)
    return row


def test_signatures_are_the_documented_ones() -> None:
    assert str(inspect.signature(repo.get_by_phone_number)) == (
        "(session: 'Session', phone_number: 'str') -> 'TargetPhoneNumber | None'"
    )
    assert str(inspect.signature(repo.list_pending_twilio_sync)) == (
        "(session: 'Session', *, subscription_id: 'uuid.UUID', limit: 'int')"
        " -> 'list[TargetPhoneNumber]'"
    )


@pytest.mark.parametrize(
    ("raw", "digits"),
    [
        ("+61 2 9999 0000", "61299990000"),
        ("(02) 9999-0000", "299990000"),
        ("0061 2 9999 0000", "61299990000"),
        ("tel:+61.2.9999.0000", "61299990000"),
        ("", ""),
        ("000", ""),
    ],
)
def test_significant_digits(raw: str, digits: str) -> None:
    assert significant_digits(raw) == digits


# -- get_by_phone_number ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "probe",
    [
        "+61 2 9999 0000",  # identical
        "299990000",  # national significant number, no trunk prefix
        "02 9999 0000",  # national format with the trunk 0
        "(02) 9999-0000",
        "+61299990000",  # E.164
        "61299990000",
        "0061 2 9999 0000",  # international 00 prefix
        "9999 0000",  # local number: also a raw substring of the stored text
        "99990000",
    ],
)
def test_lookup_tolerates_formats_of_the_same_number(
    database_url: str, subscription_id: uuid.UUID, probe: str
) -> None:
    with get_session(database_url) as session:
        stored = repo.insert(session, _number(subscription_id, STORED))
        found = repo.get_by_phone_number(session, probe)
    assert found is not None
    assert found.id == stored.id


@pytest.mark.parametrize(
    "probe",
    [
        "+61 2 9999 0001",  # another number
        "+61 3 9999 0000",
        "+44 2 9999 0000",
        "2 9999",  # 5 significant digits: too short to identify anything
        "00000",
        "",  # a raw substring match would return an arbitrary row for these
        "unknown",
        "%",
    ],
)
def test_lookup_does_not_match_other_numbers_or_fragments(
    database_url: str, subscription_id: uuid.UUID, probe: str
) -> None:
    with get_session(database_url) as session:
        repo.insert(session, _number(subscription_id, STORED))
        assert repo.get_by_phone_number(session, probe) is None


def test_the_documented_limit_a_longer_probe_does_not_find_a_nationally_stored_number(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    with get_session(database_url) as session:
        national = repo.insert(session, _number(subscription_id, "(02) 9999 0000"))
        assert repo.get_by_phone_number(session, "+61 2 9999 0000") is None
        assert repo.get_by_phone_number(session, "02 9999 0000").id == national.id
        assert repo.get_by_phone_number(session, "299990000").id == national.id


def test_every_raw_substring_match_of_at_least_min_digits_is_still_found(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    """Digits-only matching keeps the raw ``phoneNumber.contains(probe)`` of docs/data-layer.md
    and adds to it: every substring of the stored text with enough digits still finds the row."""
    with get_session(database_url) as session:
        stored = repo.insert(session, _number(subscription_id, STORED))
        fragments = {
            STORED[i:j]
            for i in range(len(STORED))
            for j in range(i + 1, len(STORED) + 1)
            if len(significant_digits(STORED[i:j])) >= MIN_MATCH_DIGITS
        }
        assert fragments
        for fragment in sorted(fragments):
            assert repo.get_by_phone_number(session, fragment).id == stored.id, fragment


def test_lookup_prefers_a_whole_number_match_then_live_rows_then_the_oldest(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    with get_session(database_url) as session:
        # "9999 0000" sits in the middle of the first number and at the end of the others.
        middle = repo.insert(session, _number(subscription_id, "+61 9999 0000 12"))
        deleted = repo.insert(session, _number(subscription_id, STORED, isDeleted=True))
        inactive = repo.insert(session, _number(subscription_id, "02 9999 0000", isActive=False))
        live = repo.insert(session, _number(subscription_id, "+61 (2) 9999-0000"))
        live_twin = repo.insert(session, _number(subscription_id, "61299990000"))
        assert repo.get_by_phone_number(session, "9999 0000").id == live.id
        assert repo.get_by_phone_number(session, "99990000 12").id == middle.id
        for record in (live, live_twin):
            repo.update(session, record, {"isActive": False})
        assert repo.get_by_phone_number(session, "9999 0000").id == inactive.id
        repo.update(session, inactive, {"isDeleted": True})
        assert (
            repo.get_by_phone_number(session, "9999 0000").id == live.id
        )  # inactive beats deleted
        assert deleted.id < live.id


def test_lookup_is_not_scoped_to_a_subscription(database_url: str) -> None:
    other = new_subscription(database_url, "Other")
    with get_session(database_url) as session:
        stored = repo.insert(session, _number(other, STORED))
        assert repo.get_by_phone_number(session, "299990000").id == stored.id


# -- list_pending_twilio_sync -----------------------------------------------------------------


def test_pending_twilio_sync_filters_and_orders_priority_then_age_then_id(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    other = new_subscription(database_url, "Other")
    rows = [
        # (label, priority, created minutes after T0, overrides)
        ("low-old", 0, 0, {}),
        ("high-new", 5, 30, {}),
        ("high-old", 5, 10, {}),
        ("mid", 2, 20, {}),
        ("high-new-twin", 5, 30, {}),  # same priority and createdAt as high-new: id decides
        ("synced", 9, 0, {"syncTwilio": True}),
        ("inactive", 9, 0, {"isActive": False}),
        ("deleted", 9, 0, {"isDeleted": True}),
        ("other-tenant", 9, 0, {"subscriptionId": other}),
    ]
    ids = {}
    with get_session(database_url) as session:
        for label, priority, minutes, overrides in rows:
            data = _number(
                subscription_id,
                f"+61 2 9999 {len(ids):04d}",
                syncPriority=priority,
                createdAt=T0 + timedelta(minutes=minutes),
                **overrides,
            )
            ids[label] = repo.insert(session, data).id
    with get_session(database_url) as session:
        queue = repo.list_pending_twilio_sync(session, subscription_id=subscription_id, limit=10)
        page = repo.list_pending_twilio_sync(session, subscription_id=subscription_id, limit=2)
    expected = ["high-old", "high-new", "high-new-twin", "mid", "low-old"]
    assert [r.id for r in queue] == [ids[label] for label in expected]
    assert [r.id for r in page] == [ids["high-old"], ids["high-new"]]


def test_pending_twilio_sync_takes_its_batch_size_from_the_caller(
    database_url: str, subscription_id: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    with get_session(database_url) as session:
        repo.bulk_insert(
            session, [_number(subscription_id, f"+61 2 9999 {i:04d}") for i in range(60)]
        )
    # The repository has no default: the handler passes the configured batch size.
    monkeypatch.delenv("PHONE_AGENT_BATCH_SIZE", raising=False)
    assert load_settings().phone_agent_batch_size == 50
    with get_session(database_url) as session:
        batch = repo.list_pending_twilio_sync(
            session, subscription_id=subscription_id, limit=load_settings().phone_agent_batch_size
        )
    assert len(batch) == 50
    monkeypatch.setenv("PHONE_AGENT_BATCH_SIZE", "7")
    with get_session(database_url) as session:
        batch = repo.list_pending_twilio_sync(
            session, subscription_id=subscription_id, limit=load_settings().phone_agent_batch_size
        )
    assert len(batch) == 7
    with get_session(database_url) as session, pytest.raises(TypeError, match="limit"):
        repo.list_pending_twilio_sync(session, subscription_id=subscription_id)  # type: ignore[call-arg]


def test_results_are_plain_rows_usable_after_the_session(
    database_url: str, subscription_id: uuid.UUID
) -> None:
    with get_session(database_url) as session:
        repo.insert(session, _number(subscription_id, STORED))
    with get_session(database_url) as session:
        [pending] = repo.list_pending_twilio_sync(session, subscription_id=subscription_id, limit=1)
        found = repo.get_by_phone_number(session, "299990000")
        assert session.scalars(select(TargetPhoneNumber)).all() == [pending]
    assert found is pending
    assert (pending.phoneNumber, pending.syncTwilio, pending.syncPriority) == (STORED, False, 0)
