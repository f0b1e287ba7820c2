"""The HubSpot engagement sync against the emulator over HTTP: engagements land on the
timeline with the activities upsert, re-running over an overlapping window duplicates nothing and
updates what changed, and the search is paged by key, so every engagement comes through."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from morpheus_pipelines.crm.models import Activity
from morpheus_pipelines.crm.steps.engagement_sync import sync_engagements
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from tests.support.timeline import lead_with_history, subscription

TOKEN = "pat-na1-engagements"
NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture
def portal() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator({"token": TOKEN}) as emulator:
        yield emulator


def client(portal: HubSpotEmulator) -> HubSpotClient:
    return HubSpotClient(
        portal.base_url, TOKEN, retry_count=0, requests_per_10s=100_000, max_backoff=0.01
    )


def activities(url: str) -> dict[str, Activity]:
    with get_session(url) as session:
        return {a.externalId: a for a in session.scalars(select(Activity))}


def test_engagements_join_the_timeline_and_an_overlapping_rerun_duplicates_nothing(
    database_url: str, portal: HubSpotEmulator
) -> None:
    subscription_id = subscription(database_url)
    lead_id = lead_with_history(
        database_url, subscription_id, NOW - timedelta(days=3), email="buyer@example.com"
    )
    portal.set_contact(501, {"email": "Buyer@Example.com"})
    earlier = NOW - timedelta(hours=5)
    portal.set_engagement(
        "calls",
        1,
        {
            "hs_call_direction": "OUTBOUND",
            "hs_call_body": "left a voicemail",
            "hubspot_owner_id": "5001",
            "hs_timestamp": earlier.isoformat(),
        },
        contact_ids=[501],
        modified_at=earlier,
    )
    portal.set_engagement(
        "emails",
        2,
        {"hs_email_direction": "INCOMING_EMAIL", "hs_email_subject": "Re: pricing"},
        contact_ids=[501],
        modified_at=earlier,
    )
    portal.set_engagement("notes", 3, {"hs_note_body": "no contact"}, modified_at=earlier)
    sessions = lambda: get_session(database_url)  # noqa: E731

    first = sync_engagements(client(portal), sessions, subscription_id, now=NOW)
    after_first = activities(database_url)

    call, email, note = after_first["1"], after_first["2"], after_first["3"]
    assert (call.type.value, call.direction, call.leadId) == ("CALL", "outbound", lead_id)
    assert call.metadata_["hubspot_owner_id"] == "5001"
    assert call.occurredAt == earlier
    assert (email.type.value, email.direction, email.contactEmail) == (
        "EMAIL",
        "inbound",
        "buyer@example.com",
    )
    assert note.leadId is None and note.hubspotContactId is None
    assert first.watermark == earlier

    # The call is edited in HubSpot and a new one arrives; the next window overlaps the first.
    later = NOW - timedelta(minutes=10)
    portal.set_engagement(
        "calls",
        1,
        {"hs_call_direction": "OUTBOUND", "hs_call_body": "spoke for 10 minutes"},
        contact_ids=[501],
        modified_at=later,
    )
    portal.set_engagement(
        "calls", 4, {"hs_call_direction": "INBOUND"}, contact_ids=[501], modified_at=later
    )
    second = sync_engagements(client(portal), sessions, subscription_id, now=NOW)
    third = sync_engagements(client(portal), sessions, subscription_id, now=NOW)
    after = activities(database_url)

    hubspot_rows = [a for a in after.values() if not a.externalId.startswith(f"{lead_id}:")]
    assert sorted(a.externalId for a in hubspot_rows) == ["1", "2", "3", "4"]
    assert after["1"].body == "spoke for 10 minutes"
    assert after["1"].id == call.id  # updated in place
    assert second.window_start == earlier - timedelta(hours=1)
    assert third.counts["calls"] == 2  # the overlap read them again; nothing new was made


def test_a_portal_of_many_pages_syncs_whole_one_query_per_page(
    portal: HubSpotEmulator,
) -> None:
    start = NOW - timedelta(days=2)
    total = 1_050
    for n in range(total):
        portal.set_engagement(
            "calls",
            n + 1,
            {"hs_call_direction": "INBOUND"},
            modified_at=start + timedelta(seconds=n),
        )

    seen: list[str] = []
    for page in client(portal).iter_engagement_pages(
        "calls", modified_since_ms=int(start.timestamp() * 1000), properties=()
    ):
        seen += [item["id"] for item in page]

    assert len(set(seen)) == total  # every engagement
    assert len(seen) > total  # each page a new query from the last time seen: one repeat


def test_an_engagement_edited_mid_sync_does_not_push_another_out_of_the_pages(
    portal: HubSpotEmulator,
) -> None:
    start = NOW - timedelta(days=1)
    for n in range(250):
        portal.set_engagement("calls", n + 1, {}, modified_at=start + timedelta(seconds=n))

    seen: list[str] = []
    pages = client(portal).iter_engagement_pages(
        "calls", modified_since_ms=int(start.timestamp() * 1000), properties=(), limit=100
    )
    for number, page in enumerate(pages):
        seen += [item["id"] for item in page]
        if number == 0:  # one already read is edited: it moves to the end of the order
            portal.set_engagement("calls", 50, {}, modified_at=NOW)

    assert set(seen) == {str(n + 1) for n in range(250)}


def test_an_engagement_synced_before_its_lead_existed_joins_the_timeline_later(
    database_url: str, portal: HubSpotEmulator
) -> None:
    subscription_id = subscription(database_url)
    portal.set_contact(777, {"email": "late@example.com"})
    portal.set_engagement(
        "emails",
        9,
        {"hs_email_direction": "INCOMING_EMAIL"},
        contact_ids=[777],
        modified_at=NOW - timedelta(minutes=5),
    )
    sessions = lambda: get_session(database_url)  # noqa: E731
    sync_engagements(client(portal), sessions, subscription_id, now=NOW)
    assert activities(database_url)["9"].leadId is None

    lead_id = lead_with_history(database_url, subscription_id, NOW, email="late@example.com")
    sync_engagements(client(portal), sessions, subscription_id, now=NOW)  # the overlap

    assert activities(database_url)["9"].leadId == lead_id
