"""The HubSpot reconciliation on the real warehouse against the emulator over HTTP
(docs/hubspot-webhooks.md, "The reconciliation"): when the webhooks for an owner change, a
``call_assigned_to`` change, an opt-out and a closed-won deal never arrive, one run brings the
database to exactly the state the webhooks would have; a second run changes nothing; and a run
after the webhooks did arrive changes nothing more (no rep's load is released twice)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from morpheus_pipelines.crm.models import Contact, Lead, SalesRep, TargetEmails
from morpheus_pipelines.crm.steps.hubspot_reconciliation import (
    contacts_cursor_key,
    deals_cursor_key,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import HubSpotError
from tests.support.databases import DatabaseFactory
from tests.support.deals import TOKEN, DealDesk, deal_desk

DEAL = 9001
CY = "103"  # a rep outside the pool: HubSpot's new owner of contact 601


@pytest.fixture
def hubspot() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator({"token": TOKEN}) as emulator:
        yield emulator
    assert emulator.errors == []


@pytest.fixture
def desk(database_url: str, hubspot: HubSpotEmulator) -> Iterator[DealDesk]:
    with deal_desk(database_url, hubspot) as running:
        yield running


def _state(url: str) -> dict[str, Any]:
    """Everything the webhooks and the reconciliation write, without row ids."""
    with get_session(url) as session:
        reps = {r.id: r.email for r in session.scalars(select(SalesRep))}
        return {
            "leads": {
                lead.sourceSubmissionId: (
                    lead.hubspotContactId,
                    lead.status,
                    lead.closedAt,
                    lead.ownerHubspotOwnerId,
                    reps.get(lead.ownerSalesRepId),
                )
                for lead in session.scalars(select(Lead))
            },
            "reps": {r.email: r.openLeads for r in session.scalars(select(SalesRep))},
            "contacts": {
                c.hubspotContactId: (c.hubspotOwnerId, c.callAssignedTo, c.updatedAt)
                for c in session.scalars(select(Contact))
            },
            "opt_outs": {
                e.email: (e.newsletterOptedOut, e.newsletterOptOutAt, e.updatedAt)
                for e in session.scalars(select(TargetEmails))
            },
        }


def _without_write_times(state: dict[str, Any]) -> dict[str, Any]:
    """The state less the ``updatedAt`` columns (when a row was written differs between the two
    databases; what it holds must not)."""
    return state | {
        "contacts": {k: v[:2] for k, v in state["contacts"].items()},
        "opt_outs": {k: v[:2] for k, v in state["opt_outs"].items()},
    }


class Changes:
    """What people change in HubSpot, at fixed times, once for both databases."""

    def __init__(self, hubspot: HubSpotEmulator) -> None:
        base = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
        self.hubspot = hubspot
        self.owner_at = base
        self.call_at = base + timedelta(seconds=1)
        self.opt_out_at = base + timedelta(seconds=2)
        self.won_at = base + timedelta(seconds=3)

    def seed(self, deal_lead_owner: str) -> None:
        """The portal before the changes (as our databases know it)."""
        past = datetime.now(UTC) - timedelta(days=3)
        self.hubspot.set_contact(601, {"hubspot_owner_id": "101"}, modified_at=past)
        self.hubspot.set_contact(602, {"email": "pat@customer.example"}, modified_at=past)
        self.hubspot.set_contact(603, {"hubspot_owner_id": deal_lead_owner}, modified_at=past)
        self.hubspot.set_contact(604, {"call_assigned_to": "101"}, modified_at=past)
        self.hubspot.add_deal(DEAL, contact_ids=[603, 777], modified_at=past)

    def make(self) -> None:
        self.hubspot.set_contact_property(601, "hubspot_owner_id", CY, modified_at=self.owner_at)
        self.hubspot.set_contact_property(604, "call_assigned_to", "102", modified_at=self.call_at)
        self.hubspot.set_contact_property(
            602, "hs_email_optout", "true", modified_at=self.opt_out_at
        )
        self.hubspot.set_deal_stage(DEAL, "closedwon", modified_at=self.won_at)

    def webhooks(self, desk: DealDesk) -> list[dict[str, Any]]:
        sender = desk.sender
        return [
            sender.property_change(601, "hubspot_owner_id", CY, occurred_at=self.owner_at),
            sender.property_change(604, "call_assigned_to", "102", occurred_at=self.call_at),
            sender.property_change(602, "hs_email_optout", "true", occurred_at=self.opt_out_at),
            sender.property_change(
                DEAL, "dealstage", "closedwon", object_type="deal", occurred_at=self.won_at
            ),
        ]


def _furnish(desk: DealDesk) -> dict[str, Any]:
    """Contacts and leads of one database; the same in every database built this way."""
    desk.portal.add_rep("cy@acme.test", CY)
    desk.portal.add_contact(601, owner="101")
    desk.portal.add_contact(602, email="pat@customer.example")
    desk.portal.add_contact(604, callAssignedTo="101")
    return {"owner": desk.lead(601), "deal": desk.lead(603), "elsewhere": desk.lead(605)}


def test_a_run_brings_missed_webhooks_state_and_runs_after_change_nothing(
    database_factory: DatabaseFactory, hubspot: HubSpotEmulator
) -> None:
    changes = Changes(hubspot)
    with (
        deal_desk(database_factory(), hubspot) as missed,
        deal_desk(database_factory(), hubspot) as delivered,
    ):
        leads = _furnish(missed)
        _furnish(delivered)
        assert _without_write_times(_state(missed.url)) == _without_write_times(
            _state(delivered.url)
        )  # two databases alike
        changes.seed(missed.leads()[leads["deal"]].ownerHubspotOwnerId)
        changes.make()

        # One database hears of the changes by webhook (and the deal worker), one never does.
        answer = delivered.send(*changes.webhooks(delivered))
        assert (answer["applied"], answer["pending"]) == (3, 1)
        assert delivered.work().statuses["applied"] == 1
        reconciled = missed.reconcile()

        assert _without_write_times(_state(missed.url)) == _without_write_times(
            _state(delivered.url)
        )
        state = _state(missed.url)
        assert state["contacts"]["601"][0] == CY
        assert state["contacts"]["604"][1] == "102"
        assert state["opt_outs"]["pat@customer.example"][:2] == (True, changes.opt_out_at)
        deal_lead = state["leads"]["s-2"]
        assert (deal_lead[1], deal_lead[2]) == ("won", changes.won_at)
        assert state["leads"]["s-1"][3:] == (CY, "cy@acme.test")
        assert state["leads"]["s-3"][1] == "open"
        assert reconciled.counts["leads_closed_won"] == 1

        # A second run changes nothing, not even a write time.
        settled = _state(missed.url)
        again = missed.reconcile()
        assert _state(missed.url) == settled
        assert again.changes == 0
        # Nor does a run where the webhooks were delivered: no load is released twice.
        before = _state(delivered.url)
        after_webhooks = delivered.reconcile()
        assert _state(delivered.url) == before
        assert after_webhooks.changes == 0
        assert after_webhooks.counts["closed_deals_read"] == 1  # it did see the closed deal


def test_each_cursor_moves_only_after_its_part_was_read_whole(
    desk: DealDesk, hubspot: HubSpotEmulator
) -> None:
    lead = desk.lead(603)
    changed_at = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)
    hubspot.set_contact(603, {"email": "x@customer.example"}, modified_at=changed_at)
    hubspot.add_deal(DEAL, contact_ids=[603], modified_at=changed_at - timedelta(hours=2))
    hubspot.set_deal_stage(DEAL, "closedlost", modified_at=changed_at)
    hubspot.fail(503, endpoint="deals_search", times=2)  # both attempts of the first page

    with pytest.raises(HubSpotError):
        desk.reconcile()

    with get_session(desk.url) as session:
        configs = CrmStore(session).configs
        subscription_id = desk.portal.subscription_id
        contacts_cursor = configs.get_value(session, contacts_cursor_key(subscription_id))
        deals_cursor = configs.get_value(session, deals_cursor_key(subscription_id))
    assert datetime.fromisoformat(contacts_cursor) == changed_at  # its part was read whole
    assert deals_cursor is None
    assert desk.leads()[lead].status == "open"

    second = desk.reconcile()

    assert desk.leads()[lead].status == "lost"
    assert second.deals_cursor == changed_at
    assert second.contacts_window_start == changed_at - timedelta(hours=1)  # the overlap
    third = desk.reconcile()
    assert third.deals_window_start == changed_at - timedelta(hours=1)
    assert third.changes == 0


def test_an_opt_in_is_never_applied_from_hubspots_state(
    desk: DealDesk, hubspot: HubSpotEmulator
) -> None:
    desk.portal.add_contact(602, email="pat@customer.example")
    opted_out_at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    with get_session(desk.url) as session:
        CrmStore(session).target_emails.set_newsletter_opt_out(
            session,
            subscription_id=desk.portal.subscription_id,
            email="pat@customer.example",
            opted_out=True,
            occurred_at=opted_out_at,
        )
    # HubSpot holds "false" (never opted out there), modified after our opt-out.
    hubspot.set_contact(602, {"email": "pat@customer.example", "hs_email_optout": "false"})

    desk.reconcile()

    assert desk.opt_outs()["pat@customer.example"] == (True, opted_out_at)


def test_a_webhook_newer_than_hubspots_read_of_the_contact_wins(
    desk: DealDesk, hubspot: HubSpotEmulator
) -> None:
    """HubSpot's search index shows a change late: a contact read there may be older than a
    webhook already applied. Without the check the read would put the old owner back."""
    desk.portal.add_contact(601, owner="101")
    read_at = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    hubspot.set_contact(601, {"hubspot_owner_id": "101"}, modified_at=read_at)
    desk.send(
        desk.sender.property_change(
            601, "hubspot_owner_id", "102", occurred_at=read_at + timedelta(minutes=5)
        )
    )
    desk.portal.add_contact(611, owner="101")
    hubspot.set_contact(611, {"hubspot_owner_id": "102"}, modified_at=read_at)

    desk.reconcile()

    with get_session(desk.url) as session:
        owners = dict(
            session.execute(select(Contact.hubspotContactId, Contact.hubspotOwnerId)).all()
        )
    assert owners["601"] == "102"  # the webhook's newer owner stays
    assert owners["611"] == "102"  # where no webhook is newer, HubSpot's read is applied


def test_a_deal_that_closed_before_a_lead_came_does_not_close_it(
    desk: DealDesk, hubspot: HubSpotEmulator
) -> None:
    """A deal won long ago and edited now (its amount) is in the window again; the lead its
    contact made since is a new conversation and stays open."""
    long_ago = datetime.now(UTC) - timedelta(days=30)
    hubspot.add_deal(DEAL, contact_ids=[603], modified_at=long_ago - timedelta(days=1))
    hubspot.set_deal_stage(DEAL, "closedwon", modified_at=long_ago)
    lead = desk.lead(603)
    hubspot.set_deal_property(DEAL, "amount", 5000)

    run = desk.reconcile()

    assert run.counts["closed_deals_read"] == 1
    assert desk.leads()[lead].status == "open"
