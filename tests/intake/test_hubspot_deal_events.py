"""The deal worker on the real warehouse, with deliveries from the emulator's webhook sender to
the intake service and the deals read from the HubSpot emulator over HTTP
(docs/hubspot-webhooks.md, "Deal events"): a closed deal closes its contacts' open leads once,
each rep's load goes down by exactly the leads closed, every event is settled once with its
outcome, and a HubSpot failure leaves the events pending with nothing half-applied."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from morpheus_pipelines.crm.api.server import close_lead
from morpheus_pipelines.crm.models import HubSpotWebhookEvent, Lead
from morpheus_pipelines.crm.steps.hubspot_deals import (
    DealEventRun,
    PendingDealEvent,
    read_deals_of,
    settle_deal_events,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.deals import TOKEN, DealDesk, deal_desk

DEAL = 9001


@pytest.fixture
def hubspot() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator({"token": TOKEN}) as emulator:
        yield emulator
    assert emulator.errors == []


@pytest.fixture
def desk(database_url: str, hubspot: HubSpotEmulator) -> Iterator[DealDesk]:
    with deal_desk(database_url, hubspot) as running:
        yield running


def _stage_change(desk: DealDesk, deal: int, stage: str | None, at: datetime) -> dict:
    """HubSpot moving the deal to ``stage`` at ``at``, and the webhook event saying so."""
    if stage is not None:
        desk.hubspot.set_deal_stage(deal, stage, modified_at=at)
    event = desk.sender.property_change(
        deal, "dealstage", stage or "", object_type="deal", occurred_at=at
    )
    if stage is None:
        del event["propertyValue"]
    return event


def _events(desk: DealDesk) -> dict[int, HubSpotWebhookEvent]:
    return {e.eventId: e for e in desk.portal.events()}


def _released(before: dict[int, int], after: dict[int, int]) -> Counter[int]:
    return Counter({rep: before[rep] - after[rep] for rep in before if before[rep] != after[rep]})


def _closed_by_rep(leads: dict[uuid.UUID, Lead], ids: list[uuid.UUID]) -> Counter[int]:
    return Counter(leads[i].ownerSalesRepId for i in ids)


def test_a_deal_closed_won_closes_its_contacts_open_leads_and_each_reps_load_once(
    desk: DealDesk,
) -> None:
    on_deal = [desk.lead(501), desk.lead(502), desk.lead(501), desk.lead(502)]
    elsewhere = desk.lead(503)
    desk.hubspot.add_deal(DEAL, contact_ids=[501, 502, 504])
    before = desk.open_leads()
    assert sum(before.values()) == 5
    won_at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    event = _stage_change(desk, DEAL, "closedwon", won_at)

    assert desk.send(event)["pending"] == 1
    assert all(lead.status == "open" for lead in desk.leads().values())  # pending until the worker
    run = desk.work()

    leads = desk.leads()
    assert [(leads[i].status, leads[i].closedAt) for i in on_deal] == [("won", won_at)] * 4
    assert leads[elsewhere].status == "open"
    assert _released(before, desk.open_leads()) == _closed_by_rep(leads, on_deal)
    settled = _events(desk)[event["eventId"]]
    assert (settled.status, settled.outcome) == ("applied", "closed 4 lead(s) as won")
    assert settled.appliedAt is not None
    assert run.leads_closed == Counter({"won": 4})
    [contacts_read] = desk.hubspot.log.entries("associations_batch_read")
    assert contacts_read.body == {"inputs": [{"id": str(DEAL)}]}


def test_the_same_event_delivered_again_releases_nothing_more(desk: DealDesk) -> None:
    lead = desk.lead(501)
    desk.hubspot.add_deal(DEAL, contact_ids=[501])
    before = desk.open_leads()
    at = datetime.now(UTC) + timedelta(seconds=1)
    event = _stage_change(desk, DEAL, "closedlost", at)

    desk.send(event)
    assert desk.sender.resend([event]).json()["replayed"] == 1  # HubSpot's retry
    first, second = desk.work(), desk.work()
    assert desk.sender.resend([event]).json()["replayed"] == 1  # and once more, later
    third = desk.work()

    assert desk.leads()[lead].status == "lost"
    assert sum(before.values()) - sum(desk.open_leads().values()) == 1
    assert (first.settled, second.settled, third.settled) == (1, 0, 0)
    assert not close_lead(desk.url, lead, "won", at)  # a closed lead stays as it was
    assert sum(before.values()) - sum(desk.open_leads().values()) == 1


def test_a_later_event_of_a_deal_already_closed_closes_nothing_and_says_why(
    desk: DealDesk,
) -> None:
    desk.lead(501)
    desk.hubspot.add_deal(DEAL, contact_ids=[501])
    at = datetime.now(UTC) + timedelta(seconds=1)
    desk.send(_stage_change(desk, DEAL, "closedwon", at))
    desk.work()
    after_first = desk.open_leads()

    again = _stage_change(desk, DEAL, "closedwon", at + timedelta(minutes=5))
    desk.send(again)
    run = desk.work()

    assert desk.open_leads() == after_first
    settled = _events(desk)[again["eventId"]]
    assert settled.status == "ignored"
    assert settled.outcome == "no open lead of the deal's 1 contact(s) to close as won"
    assert run.ignored == Counter({"no_open_lead": 1})


def test_a_deal_of_contacts_we_do_not_know_closes_nothing_and_is_ignored(
    desk: DealDesk,
) -> None:
    mine = desk.lead(501)
    desk.hubspot.add_deal(DEAL, contact_ids=[777])
    desk.hubspot.add_deal(DEAL + 1)  # no contacts at all
    before = desk.open_leads()
    at = datetime.now(UTC) + timedelta(seconds=1)
    unknown = _stage_change(desk, DEAL, "closedwon", at)
    lonely = _stage_change(desk, DEAL + 1, "closedwon", at)

    desk.send(unknown, lonely)
    desk.work()

    assert desk.leads()[mine].status == "open"
    assert desk.open_leads() == before
    events = _events(desk)
    assert (events[unknown["eventId"]].status, events[unknown["eventId"]].outcome) == (
        "ignored",
        "no open lead of the deal's 1 contact(s) to close as won",
    )
    assert (events[lonely["eventId"]].status, events[lonely["eventId"]].outcome) == (
        "ignored",
        "the deal has no contacts",
    )


def test_hubspot_failing_leaves_the_events_pending_and_a_later_run_applies_them(
    desk: DealDesk,
) -> None:
    first, second = desk.lead(501), desk.lead(502)
    desk.hubspot.add_deal(DEAL, contact_ids=[501])
    desk.hubspot.add_deal(DEAL + 1, contact_ids=[502])
    before = desk.open_leads()
    at = datetime.now(UTC) + timedelta(seconds=1)
    closed = _stage_change(desk, DEAL, "closedwon", at)
    unread = _stage_change(desk, DEAL + 1, None, at)  # no value: the deal must be read
    desk.hubspot.set_deal_stage(DEAL + 1, "closedlost", modified_at=at)
    desk.send(closed, unread)
    # Both attempts of the contacts read fail (the client retries once).
    desk.hubspot.fail(503, endpoint="associations_batch_read", times=2)

    failed = desk.work()

    assert failed.error is not None and "503" in failed.error
    assert {e.status for e in _events(desk).values()} == {"pending"}
    leads = desk.leads()
    assert (leads[first].status, leads[second].status) == ("open", "open")  # not even the one
    assert desk.open_leads() == before  # whose stage the event carried

    recovered = desk.work()

    leads = desk.leads()
    assert (leads[first].status, leads[second].status) == ("won", "lost")
    assert recovered.error is None and recovered.statuses == Counter({"applied": 2})
    assert sum(before.values()) - sum(desk.open_leads().values()) == 2
    assert desk.hubspot.log.entries("deals_batch_read")[-1].body["inputs"] == [
        {"id": str(DEAL + 1)}
    ]


def test_a_deal_owner_change_is_ignored_with_the_reason(desk: DealDesk) -> None:
    lead = desk.lead(501)
    desk.hubspot.add_deal(DEAL, contact_ids=[501])
    before = desk.leads()[lead]
    other = "102" if before.ownerHubspotOwnerId == "101" else "101"
    owner = desk.sender.property_change(DEAL, "hubspot_owner_id", other, object_type="deal")

    desk.send(owner)
    desk.work()

    settled = _events(desk)[owner["eventId"]]
    assert settled.status == "ignored"
    assert "no rule gives it to the contacts' leads" in settled.outcome
    after = desk.leads()[lead]
    assert (after.ownerHubspotOwnerId, after.status) == (before.ownerHubspotOwnerId, "open")
    assert desk.hubspot.log.entries("associations_batch_read") == []  # nothing to read


def test_only_the_latest_stage_change_counts_whatever_order_they_came_in(
    desk: DealDesk,
) -> None:
    lead = desk.lead(501)
    desk.hubspot.add_deal(DEAL, contact_ids=[501])
    at = datetime.now(UTC) + timedelta(seconds=1)
    won = _stage_change(desk, DEAL, "closedwon", at)
    reopened = _stage_change(desk, DEAL, "appointmentscheduled", at + timedelta(minutes=1))

    desk.send(reopened)  # the later change arrives first
    desk.send(won)
    desk.work()

    assert desk.leads()[lead].status == "open"  # the deal is open again in HubSpot
    events = _events(desk)
    assert events[won["eventId"]].outcome.startswith("superseded")
    assert events[reopened["eventId"]].outcome == (
        "stage 'appointmentscheduled' is neither closed won nor closed lost"
    )


def test_a_lead_that_came_after_the_deal_closed_stays_open(desk: DealDesk) -> None:
    closed_at = datetime.now(UTC) - timedelta(hours=1)
    newer = desk.lead(501)  # created now, an hour after the deal closed
    desk.hubspot.add_deal(DEAL, contact_ids=[501])

    desk.send(_stage_change(desk, DEAL, "closedwon", closed_at))
    desk.work()

    assert desk.leads()[newer].status == "open"


def test_a_stale_batch_settled_again_changes_nothing(desk: DealDesk) -> None:
    """Two workers holding the same batch (one read it before the other committed): the
    second finds the events no longer pending and neither closes nor re-settles them."""
    desk.lead(501)
    desk.hubspot.add_deal(DEAL, contact_ids=[501])
    event = _stage_change(desk, DEAL, "closedwon", datetime.now(UTC) + timedelta(seconds=1))
    desk.send(event)
    with get_session(desk.url) as session:
        [row] = CrmStore(session).webhooks.pending_deal_events(session, desk.portal.subscription_id)
        batch = [
            PendingDealEvent(
                row.id,
                row.eventId,
                str(row.objectId),
                row.propertyName,
                row.propertyValue,
                row.occurredAt,
            )
        ]
    with desk.client() as hubspot:
        reads = read_deals_of(hubspot, batch)
    runs = [DealEventRun(), DealEventRun()]
    for run in runs:
        with get_session(desk.url) as session:
            settle_deal_events(
                CrmStore(session),
                desk.portal.subscription_id,
                batch,
                reads,
                datetime.now(UTC),
                run,
            )

    assert [r.settled for r in runs] == [1, 0]
    assert _events(desk)[event["eventId"]].outcome == "closed 1 lead(s) as won"
