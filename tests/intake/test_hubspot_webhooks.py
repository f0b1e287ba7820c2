"""``POST /v1/webhooks/hubspot`` over real HTTP on the real warehouse (docs/hubspot-webhooks.md):
the signature guard, each event applied once, what is applied in the request and what is left
pending, and the delivery's log line. Deliveries come from the HubSpot emulator's sender."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests
from sqlalchemy import select, update

from morpheus_pipelines.crm.api.dependencies import MAX_BODY_BYTES
from morpheus_pipelines.crm.models import (
    Activity,
    ActivityType,
    Contact,
    Lead,
    LifeCycleStage,
    Subscription,
    TargetEmails,
    TargetPhoneNumber,
)
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.observability.redaction import redact
from tests.support.events import EventLines
from tests.support.intake import client, create_lead, problem_of
from tests.support.webhooks import CLIENT_SECRET, Portal, hooked_service, stored_events

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def hooked(database_url: str) -> Iterator[tuple[str, Any]]:
    with hooked_service(database_url) as running:
        yield running


@pytest.fixture
def portal(database_url: str) -> Portal:
    return Portal(database_url)


def _base(hooked: tuple[str, Any]) -> str:
    return hooked[0]


# -- the signature guard ------------------------------------------------------------------------


def test_a_forged_delivery_with_a_valid_looking_signature_is_refused_and_stores_nothing(
    hooked, portal: Portal
) -> None:
    base = _base(hooked)
    sender = portal.sender(base)
    contact = portal.add_contact(501, owner="101")
    events = [sender.property_change(501, "hubspot_owner_id", "666")]
    genuine = sender.body([sender.property_change(501, "firstname", "Pat")])
    forged = sender.body(events)
    # The headers HubSpot sent with another body: well-formed, fresh, and wrong for this one.
    headers = sender.headers(genuine)

    refused = requests.post(sender.url, data=forged, headers=headers, timeout=10)

    problem_of(refused, 401, "invalid_signature")
    assert stored_events(portal.url) == 0
    assert portal.contact(contact).hubspotOwnerId == "101"
    # Without the check it would have been stored and applied: the same body, signed.
    accepted = requests.post(sender.url, data=forged, headers=sender.headers(forged), timeout=10)
    assert accepted.status_code == 200, accepted.text
    assert stored_events(portal.url) == 1
    assert portal.contact(contact).hubspotOwnerId == "666"


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ({}, "missing_signature"),
        ({"X-HubSpot-Request-Timestamp": "1"}, "missing_signature"),
        ({"X-HubSpot-Signature-v3": "c2lnbmF0dXJl"}, "missing_signature"),
        ({"X-HubSpot-Signature-v3": "c2lnbmF0dXJl", "X-HubSpot-Request-Timestamp": "soon"},
         "invalid_timestamp"),
    ],
)  # fmt: skip
def test_a_delivery_without_a_signature_is_refused(
    hooked, portal: Portal, headers: dict, error: str
) -> None:
    sender = portal.sender(_base(hooked))
    body = sender.body([sender.property_change(501, "hubspot_owner_id", "666")])
    answer = requests.post(sender.url, data=body, headers=headers, timeout=10)
    problem_of(answer, 401, error)
    assert stored_events(portal.url) == 0


def test_a_stale_or_future_timestamp_is_refused_whatever_the_signature(
    hooked, portal: Portal
) -> None:
    sender = portal.sender(_base(hooked))
    events = [sender.property_change(501, "hubspot_owner_id", "666")]
    now_ms = int(datetime.now(UTC).timestamp() * 1000)
    stale = sender.send(events, timestamp_ms=now_ms - 6 * 60 * 1000)
    future = sender.send(events, timestamp_ms=now_ms + 6 * 60 * 1000)
    problem_of(stale, 401, "stale_timestamp")
    problem_of(future, 401, "timestamp_in_the_future")
    assert stored_events(portal.url) == 0
    assert sender.send(events, timestamp_ms=now_ms - 4 * 60 * 1000).status_code == 200


def test_a_delivery_signed_with_another_secret_is_refused(hooked, portal: Portal) -> None:
    sender = portal.sender(_base(hooked), secret="not-the-apps-secret")
    answer = sender.send([sender.property_change(501, "hubspot_owner_id", "666")])
    assert answer.status_code == 401
    assert stored_events(portal.url) == 0


def test_without_a_client_secret_every_delivery_is_refused(database_url: str) -> None:
    portal = Portal(database_url)
    with hooked_service(database_url, hubspot_client_secret="") as (base, _):
        sender = portal.sender(base, secret="")
        answer = sender.send([sender.property_change(501, "hubspot_owner_id", "666")])
    problem_of(answer, 401, "webhook_secret_not_configured")
    assert stored_events(database_url) == 0


def test_behind_a_proxy_the_signature_covers_the_public_url(database_url: str) -> None:
    portal = Portal(database_url)
    public = "https://crm.example.com"
    with hooked_service(database_url, public_url=public) as (base, _):
        sender = portal.sender(base)
        events = [sender.property_change(501, "firstname", "Pat")]
        # signed for the address the request arrived at: not what HubSpot was given
        assert sender.send(events).status_code == 401
        # signed for the public URL (+ path), as HubSpot signs it
        public_sender = portal.sender(public)
        body = public_sender.body(events)
        answer = requests.post(
            f"{base}/v1/webhooks/hubspot",
            data=body,
            headers=public_sender.headers(body),
            timeout=10,
        )
    assert answer.status_code == 200, answer.text
    assert stored_events(database_url) == 1


def test_the_client_secret_never_reaches_a_log_line(hooked) -> None:
    assert redact(f"secret={CLIENT_SECRET}") == "secret=***"


def test_a_body_over_the_size_limit_is_refused_as_on_every_endpoint(hooked, portal: Portal) -> None:
    sender = portal.sender(_base(hooked))
    big = sender.property_change(501, "firstname", "x" * MAX_BODY_BYTES)
    answer = sender.send([big])
    assert answer.status_code == 413
    assert answer.json()["error"] == "body_too_large"
    assert stored_events(portal.url) == 0


def test_a_signed_delivery_that_is_not_a_list_of_events_is_a_422_naming_the_field(
    hooked, portal: Portal
) -> None:
    sender = portal.sender(_base(hooked))
    event = sender.property_change(501, "hubspot_owner_id", "102")
    del event["objectId"]
    answer = sender.send([event])
    assert answer.status_code == 422
    assert answer.json()["fields"][0]["field"] == "[0].objectId"
    body = b'{"not": "a list"}'
    answer = requests.post(sender.url, data=body, headers=sender.headers(body), timeout=10)
    assert answer.status_code == 422
    assert stored_events(portal.url) == 0


# -- applied once ------------------------------------------------------------------------------


def test_a_replayed_delivery_answers_200_and_changes_nothing(hooked, portal: Portal) -> None:
    sender = portal.sender(_base(hooked))
    contact = portal.add_contact(501, owner="101")
    events = [sender.property_change(501, "hubspot_owner_id", "102")]

    first = sender.send(events)
    assert first.status_code == 200
    assert first.json()["applied"] == 1
    assert portal.contact(contact).hubspotOwnerId == "102"
    # someone changes it again in HubSpot, and that change is applied...
    sender.send([sender.property_change(501, "hubspot_owner_id", "103")])
    assert portal.contact(contact).hubspotOwnerId == "103"
    # ...then HubSpot retries the first delivery: it is stored already and applies nothing
    replay = sender.resend(events)

    assert replay.status_code == 200
    assert replay.json() | {"events": 1} == {
        "events": 1,
        "new": 0,
        "replayed": 1,
        "applied": 0,
        "pending": 0,
        "ignored": 0,
        "unknown_portal_events": 0,
    }
    assert portal.contact(contact).hubspotOwnerId == "103"
    assert [e.eventId for e in portal.events()] == [events[0]["eventId"], events[0]["eventId"] + 1]


def test_an_event_twice_in_one_delivery_is_stored_and_applied_once(hooked, portal) -> None:
    sender = portal.sender(_base(hooked))
    portal.add_contact(501, owner="101")
    event = sender.property_change(501, "hubspot_owner_id", "102")
    answer = sender.send([event, event])
    assert answer.status_code == 200
    assert answer.json()["new"] == 1 and answer.json()["replayed"] == 1
    assert len(portal.events()) == 1


def test_the_same_delivery_sent_twice_at_once_is_applied_once(hooked, portal: Portal) -> None:
    base = _base(hooked)
    ana = portal.add_rep("ana@acme.test", "101")
    ben = portal.add_rep("ben@acme.test", "102")
    portal.add_pool("default", {ana: 1}, default=True)
    lead = create_lead(client(portal.key), base, portal, "s-1")
    portal.link_lead(lead, 501)
    portal.add_contact(501, owner="101")
    sender = portal.sender(base)
    events = [sender.property_change(501, "hubspot_owner_id", "102")]

    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(lambda _: sender.send(events), range(2)))

    assert [a.status_code for a in answers] == [200, 200]
    assert sorted(a.json()["applied"] for a in answers) == [0, 1]
    assert portal.open_leads() == {ana: 0, ben: 1}  # the load moved once


def test_an_unknown_portal_is_answered_200_logged_once_and_nothing_stored(
    hooked, portal: Portal, event_lines: EventLines
) -> None:
    contact = portal.add_contact(501, owner="101")
    stranger = Portal(portal.url, portal_id=999_999)
    with get_session(portal.url) as session:  # nobody answers for the portal any more
        session.get(Subscription, stranger.subscription_id).hubspotPortalId = None
    sender = stranger.sender(_base(hooked))
    answer = sender.send([sender.property_change(501, "hubspot_owner_id", "666")])
    assert answer.status_code == 200
    assert answer.json()["unknown_portal_events"] == 1
    assert stored_events(portal.url) == 0
    assert portal.contact(contact).hubspotOwnerId == "101"
    [line] = event_lines.events("hubspot_webhook_unknown_portal")
    assert line["portal_ids"] == [999_999]


# -- what is applied ---------------------------------------------------------------------------


def test_an_owner_change_updates_the_contact_and_moves_its_leads_and_their_load(
    hooked, portal: Portal
) -> None:
    base = _base(hooked)
    ana = portal.add_rep("ana@acme.test", "101")
    ben = portal.add_rep("ben@acme.test", "102")
    portal.add_pool("default", {ana: 1}, default=True)
    lead = create_lead(client(portal.key), base, portal, "s-1")
    portal.link_lead(lead, 501)
    contact = portal.add_contact(501, owner="101")
    assert portal.open_leads() == {ana: 1, ben: 0}
    sender = portal.sender(base)

    answer = sender.send([sender.property_change(501, "hubspot_owner_id", "102")])

    assert answer.status_code == 200
    assert portal.contact(contact).hubspotOwnerId == "102"
    stored = portal.lead(lead)
    assert (stored.ownerHubspotOwnerId, stored.ownerSalesRepId) == ("102", ben)
    assert portal.open_leads() == {ana: 0, ben: 1}
    [event] = portal.events()
    assert event.status == "applied" and event.appliedAt is not None
    assert (event.propertyName, event.propertyValue) == ("hubspot_owner_id", "102")
    assert event.payload["changeSource"] == "CRM_UI"


def test_an_owner_change_moves_no_load_of_a_lead_whose_load_was_released(
    hooked, portal: Portal
) -> None:
    base = _base(hooked)
    ana = portal.add_rep("ana@acme.test", "101")
    ben = portal.add_rep("ben@acme.test", "102")
    portal.add_pool("default", {ana: 1}, default=True)
    lead = create_lead(client(portal.key), base, portal, "s-1")
    portal.link_lead(lead, 501)
    portal.add_contact(501, owner="101")
    now = datetime.now(UTC)
    with get_session(portal.url) as session:  # untouched for long: it stopped counting
        session.execute(
            update(Lead)
            .where(Lead.id == uuid.UUID(lead))
            .values(createdAt=now - timedelta(days=90))
        )
        session.execute(
            update(Activity)
            .where(Activity.leadId == uuid.UUID(lead))
            .values(occurredAt=now - timedelta(days=90))
        )
    with get_session(portal.url) as session:
        assert (
            LeadRepository().release_stale(
                session, untouched_since=now - timedelta(days=30), at=now
            )
            == 1
        )
    assert portal.open_leads() == {ana: 0, ben: 0}
    sender = portal.sender(base)

    answer = sender.send([sender.property_change(501, "hubspot_owner_id", "102")])

    assert answer.status_code == 200
    assert portal.lead(lead).ownerHubspotOwnerId == "102"
    assert portal.open_leads() == {ana: 0, ben: 0}


def test_a_cleared_owner_clears_the_contacts_and_leaves_the_leads_owner(
    hooked, portal: Portal
) -> None:
    base = _base(hooked)
    ana = portal.add_rep("ana@acme.test", "101")
    portal.add_pool("default", {ana: 1}, default=True)
    lead = create_lead(client(portal.key), base, portal, "s-1")
    portal.link_lead(lead, 501)
    contact = portal.add_contact(501, owner="101")
    sender = portal.sender(base)
    sender.send([sender.property_change(501, "hubspot_owner_id", "")])
    assert portal.contact(contact).hubspotOwnerId is None
    assert portal.lead(lead).ownerHubspotOwnerId == "101"  # a lead always has an owner


def test_call_assigned_to_is_applied_to_the_contact(hooked, portal: Portal) -> None:
    contact = portal.add_contact(501, owner="101")
    sender = portal.sender(_base(hooked))
    sender.send([sender.property_change(501, "call_assigned_to", "102")])
    assert portal.contact(contact).callAssignedTo == "102"
    assert portal.contact(contact).hubspotOwnerId == "101"


def test_events_of_one_delivery_are_applied_in_the_order_they_happened(
    hooked, portal: Portal
) -> None:
    contact = portal.add_contact(501, owner="101")
    sender = portal.sender(_base(hooked))
    later = sender.property_change(501, "hubspot_owner_id", "103", occurred_at=T0)
    earlier = sender.property_change(
        501, "hubspot_owner_id", "102", occurred_at=T0 - timedelta(seconds=5)
    )
    assert sender.send([later, earlier]).status_code == 200
    assert portal.contact(contact).hubspotOwnerId == "103"


def test_an_older_owner_change_arriving_later_does_not_undo_a_newer_one(
    hooked, portal: Portal
) -> None:
    contact = portal.add_contact(501, owner="101")
    sender = portal.sender(_base(hooked))
    sender.send([sender.property_change(501, "hubspot_owner_id", "103", occurred_at=T0)])
    late = sender.send(
        [sender.property_change(501, "hubspot_owner_id", "102", occurred_at=T0 - timedelta(1))]
    )
    assert late.json()["ignored"] == 1
    assert portal.contact(contact).hubspotOwnerId == "103"


def _opt_out(url: str, portal: Portal, email: str) -> TargetEmails | None:
    with get_session(url) as session:
        return session.scalars(
            select(TargetEmails).where(
                TargetEmails.subscriptionId == portal.subscription_id,
                TargetEmails.email == email,
            )
        ).first()


def test_an_email_opt_out_goes_through_the_out_of_order_guard(hooked, portal: Portal) -> None:
    portal.add_contact(501, email="Pat.Buyer@Customer.example")
    sender = portal.sender(_base(hooked))

    sender.send([sender.property_change(501, "hs_email_optout", "true", occurred_at=T0)])

    row = _opt_out(portal.url, portal, "pat.buyer@customer.example")
    assert row.newsletterOptedOut is True
    assert row.newsletterOptOutAt == T0  # the event's time, not the delivery's
    # an older "subscribed" arriving afterwards cannot undo the opt-out
    stale = sender.property_change(
        501, "hs_email_optout", "false", occurred_at=T0 - timedelta(hours=1)
    )
    assert sender.send([stale]).status_code == 200
    row = _opt_out(portal.url, portal, "pat.buyer@customer.example")
    assert row.newsletterOptedOut is True and row.newsletterOptOutAt == T0


def test_an_opt_out_of_a_contact_we_do_not_know_is_kept_pending(hooked, portal) -> None:
    sender = portal.sender(_base(hooked))
    answer = sender.send([sender.property_change(404, "hs_email_optout", "true")])
    assert answer.json()["pending"] == 1
    [event] = portal.events()
    assert event.status == "pending" and event.appliedAt is None


def test_a_deleted_contact_is_marked_through_its_status_columns_and_nothing_is_deleted(
    hooked, portal: Portal
) -> None:
    contact = portal.add_contact(501, owner="101")
    with get_session(portal.url) as session:
        session.add(
            TargetPhoneNumber(
                subscriptionId=portal.subscription_id, phoneNumber="+6591234567", contactId=contact
            )
        )
        session.add(
            TargetEmails(subscriptionId=portal.subscription_id, email="person501@customer.example")
        )
    sender = portal.sender(_base(hooked))

    assert sender.send([sender.deletion(501)]).status_code == 200

    stored = portal.contact(contact)
    assert stored.lifeCycleStage is LifeCycleStage.DISQUALIFIED
    assert stored.hubspotOwnerId == "101"  # the row and its history stay
    with get_session(portal.url) as session:
        phone = session.scalars(select(TargetPhoneNumber)).one()
        address = session.scalars(select(TargetEmails)).one()
    assert (phone.isActive, phone.isDeleted) == (False, True)
    assert address.isDeleted is True


def test_a_merge_re_points_the_merged_contacts_rows_and_keeps_their_activities(
    hooked, portal: Portal
) -> None:
    base = _base(hooked)
    ana = portal.add_rep("ana@acme.test", "101")
    portal.add_pool("default", {ana: 1}, default=True)
    primary = portal.add_contact(501, owner="101")
    merged = portal.add_contact(777, owner="102", email="other@customer.example")
    lead = create_lead(client(portal.key), base, portal, "s-1")
    portal.link_lead(lead, 777)
    with get_session(portal.url) as session:
        session.add(
            Activity(
                subscriptionId=portal.subscription_id,
                externalId="call-1",
                type=ActivityType.CALL,
                contactId=merged,
                hubspotContactId="777",
            )
        )
    sender = portal.sender(base)

    assert sender.send([sender.merge(501, [777])]).status_code == 200

    assert portal.contact(merged).hubspotContactId == "501"
    assert portal.contact(primary).hubspotContactId == "501"
    assert portal.lead(lead).hubspotContactId == "501"
    with get_session(portal.url) as session:
        [activity] = session.scalars(select(Activity).where(Activity.externalId == "call-1"))
        assert (activity.contactId, activity.hubspotContactId) == (merged, "501")
        assert session.scalar(select(Contact.id).where(Contact.id == merged)) == merged
    # later events about the surviving contact reach both local rows
    sender.send([sender.property_change(501, "hubspot_owner_id", "103")])
    assert {portal.contact(c).hubspotOwnerId for c in (primary, merged)} == {"103"}


def test_deal_changes_are_stored_pending_and_other_events_ignored(hooked, portal) -> None:
    contact = portal.add_contact(501, owner="101")
    sender = portal.sender(_base(hooked))
    answer = sender.send(
        [
            sender.property_change(9001, "dealstage", "closedwon", object_type="deal"),
            sender.property_change(9001, "hubspot_owner_id", "102", object_type="deal"),
            sender.property_change(501, "firstname", "Pat"),
            sender.event("company.creation", 3001),
        ]
    )
    assert answer.status_code == 200
    assert answer.json() | {"events": 4} == {
        "events": 4,
        "new": 4,
        "replayed": 0,
        "applied": 0,
        "pending": 2,
        "ignored": 2,
        "unknown_portal_events": 0,
    }
    statuses = {(e.subscriptionType, e.propertyName): e.status for e in portal.events()}
    assert statuses == {
        ("deal.propertyChange", "dealstage"): "pending",
        ("deal.propertyChange", "hubspot_owner_id"): "pending",
        ("contact.propertyChange", "firstname"): "ignored",
        ("company.creation", None): "ignored",
    }
    assert portal.contact(contact).hubspotOwnerId == "101"  # a deal's owner is not the contact's


def test_one_line_per_delivery_with_counts_and_no_personal_data(
    hooked, portal: Portal, event_lines: EventLines
) -> None:
    portal.add_contact(501, email="pat.buyer@customer.example")
    sender = portal.sender(_base(hooked))
    sender.send(
        [
            sender.property_change(501, "hs_email_optout", "true"),
            sender.property_change(501, "email", "new.address@customer.example"),
            sender.property_change(501, "phone", "+65 9123 4567"),
        ]
    )
    [line] = event_lines.events("hubspot_webhook_received")
    assert (line["events"], line["applied"], line["ignored"]) == (3, 1, 2)
    written = json.dumps(event_lines.lines)
    for personal in ("pat.buyer", "new.address", "9123", CLIENT_SECRET):
        assert personal not in written
