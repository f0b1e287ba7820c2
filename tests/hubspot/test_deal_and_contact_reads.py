"""The client's reads the deal worker and the reconciliation converge on, against the emulator
over HTTP: the deals and contacts search by modification time (moving its own watermark past
HubSpot's 10,000-result cap), the deals batch read with the stage's time, and a deal's
contacts however many pages HubSpot answers them in."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import (
    SEARCH_RESULT_CAP,
    DealStage,
    HubSpotClient,
    HubSpotError,
)

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
Client = Callable[..., HubSpotClient]


def test_deals_modified_since_come_oldest_first_with_their_properties(
    emulator: HubSpotEmulator, make_client: Client
) -> None:
    emulator.add_deal(1, stage="closedwon", modified_at=T0 + timedelta(minutes=2))
    emulator.add_deal(2, stage="closedlost", modified_at=T0 + timedelta(minutes=1))
    emulator.add_deal(3, modified_at=T0 - timedelta(seconds=1))  # before the window

    pages = list(make_client().iter_deals_modified_since(T0, ["dealstage"]))

    rows = [(d["id"], d["properties"]["dealstage"]) for page in pages for d in page]
    assert rows == [("2", "closedlost"), ("1", "closedwon")]
    assert "hs_lastmodifieddate" in pages[0][0]["properties"]
    [request] = emulator.log.entries("deals_search")
    assert request.body["filterGroups"][0]["filters"][0]["value"] == str(int(T0.timestamp() * 1000))


def test_the_contacts_search_moves_its_watermark_past_the_10000_result_cap(
    emulator: HubSpotEmulator, make_client: Client
) -> None:
    total = SEARCH_RESULT_CAP + 50
    for n in range(total):
        emulator.set_contact(n + 1, {"email": None}, modified_at=T0 + timedelta(seconds=n))

    seen: set[str] = set()
    for page in make_client().iter_contacts_modified_since(T0, ["email"], limit=200):
        seen |= {c["id"] for c in page}

    assert len(seen) == total
    # Each page is a new query from the last time seen: none ever pages by offset.
    assert {e.body["after"] for e in emulator.log.entries("contacts_search")} == {"0"}
    assert emulator.log.statuses("contacts_search").count(400) == 0


def test_more_records_of_one_time_than_the_cap_is_an_error_not_a_silent_stop(
    emulator: HubSpotEmulator, make_client: Client
) -> None:
    for n in range(SEARCH_RESULT_CAP + 1):
        emulator.add_deal(n + 1, modified_at=T0)

    with pytest.raises(HubSpotError, match="share one modification time"):
        for _ in make_client().iter_deals_modified_since(T0, [], limit=200):
            pass
    assert 400 not in emulator.log.statuses("deals_search")  # stopped before HubSpot refused


def test_a_naive_time_is_refused(make_client: Client) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        next(make_client().iter_contacts_modified_since(datetime(2026, 11, 2), []))


def test_read_deals_and_their_stage_with_the_time_it_was_entered(
    emulator: HubSpotEmulator, make_client: Client
) -> None:
    emulator.add_deal(10, owner_id="7", amount=250, modified_at=T0)
    emulator.set_deal_stage(10, "closedwon", modified_at=T0 + timedelta(hours=3))
    emulator.add_deal(11, modified_at=T0)
    client = make_client()

    deals = client.read_deals(["10", "11", "12"], ["dealstage", "hubspot_owner_id", "amount"])
    stages = client.read_deal_stages(["10", "11", "12"])

    assert deals == {
        "10": {"dealstage": "closedwon", "hubspot_owner_id": "7", "amount": "250"},
        "11": {"dealstage": "appointmentscheduled", "hubspot_owner_id": None, "amount": None},
    }
    assert stages == {
        "10": DealStage("closedwon", T0 + timedelta(hours=3)),
        "11": DealStage("appointmentscheduled", T0),
    }
    [read] = [e.body for e in emulator.log.entries("deals_batch_read")][-1:]
    assert read["propertiesWithHistory"] == ["dealstage"]


def test_a_deals_contacts_come_whole_across_association_pages(
    emulator: HubSpotEmulator, make_client: Client
) -> None:
    emulator.add_deal(20, contact_ids=range(1, 602))
    emulator.add_deal(21, contact_ids=[9])
    emulator.add_deal(22)

    contacts = make_client().read_deal_contacts(["20", "21", "22"])

    assert contacts["20"] == [str(n) for n in range(1, 602)]
    assert contacts == {"20": contacts["20"], "21": ["9"]}
    asked = [e.body["inputs"] for e in emulator.log.entries("associations_batch_read")]
    assert asked == [
        [{"id": "20"}, {"id": "21"}, {"id": "22"}],
        [{"id": "20", "after": "500"}],
    ]


def test_more_than_100_deals_in_one_read_is_refused(make_client: Client) -> None:
    ids = [str(n) for n in range(101)]
    with pytest.raises(ValueError, match="at most 100"):
        make_client().read_deal_contacts(ids)
    with pytest.raises(ValueError, match="at most 100"):
        make_client().read_deals(ids, ["dealstage"])


def test_hubspot_failing_the_read_is_retried_then_raised_without_the_token(
    emulator: HubSpotEmulator, make_client: Client
) -> None:
    emulator.add_deal(30, contact_ids=[1])
    emulator.fail(503, endpoint="associations_batch_read", times=None)

    with pytest.raises(HubSpotError) as raised:
        make_client(retry_count=2).read_deal_contacts(["30"])

    assert emulator.log.statuses("associations_batch_read") == [503, 503, 503]
    assert "SECRETTOKEN" not in str(raised.value)
