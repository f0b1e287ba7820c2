"""An owner a person set in HubSpot, delivered by webhook, is respected by the next
re-engagement run (docs/hubspot-webhooks.md, docs/ownership.md).

The ownership block decides from the contact's current owner: at claim time it reads the
owners HubSpot has now (one batch read) and writes them to ``contacts.hubspotOwnerId``; a
contact HubSpot's read does not return keeps the owner of the ``contacts`` row, which is
where the webhook's change lands. Both paths are tested: HubSpot and the webhook agree, and
only the webhook knows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from morpheus_pipelines.crm.api.webhooks import PATH
from morpheus_pipelines.crm.models import AssignmentOutcome, ReengagementSegment, Subscription
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.devtools.emulators.hubspot import WebhookSender
from tests.support.ownership import World
from tests.support.webhooks import CLIENT_SECRET, PORTAL_ID, hooked_service

S = ReengagementSegment


@pytest.fixture
def staffed(world: World) -> World:
    world.add_rep("ana@acme.test", "101")
    world.add_rep("ben@acme.test", "102")
    with world.sessions() as session:
        session.get(Subscription, world.subscription_id).hubspotPortalId = PORTAL_ID
    return world


@pytest.fixture
def hooks(staffed: World) -> Iterator[WebhookSender]:
    with hooked_service(staffed.url) as (base, _):
        yield WebhookSender(f"{base}{PATH}", CLIENT_SECRET, portal_id=PORTAL_ID)


def _owner_changed_in_hubspot(world: World, hooks: WebhookSender, contact: int, owner: str) -> Any:
    hubspot_id = world.contact(contact).hubspotContactId
    if world.hubspot.contact(hubspot_id) is not None:
        world.hubspot.set_contact(hubspot_id, {"hubspot_owner_id": owner})
    answer = hooks.send([hooks.property_change(int(hubspot_id), "hubspot_owner_id", owner)])
    assert answer.status_code == 200 and answer.json()["applied"] == 1
    return answer


def test_an_owner_a_person_set_in_hubspot_is_kept_by_the_next_run(
    staffed: World, hooks: WebhookSender
) -> None:
    contact = staffed.add_contact(owner=DIALER_FALLBACK_HUBSPOT_OWNER_ID)
    _owner_changed_in_hubspot(staffed, hooks, contact, "102")
    assert staffed.contact(contact).hubspotOwnerId == "102"
    staffed.add_member(S.EMAIL_CLICK, contact)

    staffed.run(S.EMAIL_CLICK)

    assert staffed.assignment(contact).outcome is AssignmentOutcome.KEPT_OWNER
    # Left alone: no property of the contact is written back.
    assert staffed.hubspot.log.entries("contacts_batch_update") == []
    assert staffed.hubspot_contact(contact)["properties"]["hubspot_owner_id"] == "102"
    assert staffed.contact(contact).hubspotOwnerId == "102"


def test_when_hubspots_read_does_not_return_the_contact_the_webhooks_owner_decides(
    staffed: World, hooks: WebhookSender
) -> None:
    # Without the webhook, this contact (the AI owner's, unknown to the read) is reassigned.
    control = staffed.add_contact(owner=DIALER_FALLBACK_HUBSPOT_OWNER_ID, in_hubspot=False)
    contact = staffed.add_contact(owner=DIALER_FALLBACK_HUBSPOT_OWNER_ID, in_hubspot=False)
    _owner_changed_in_hubspot(staffed, hooks, contact, "102")
    staffed.add_member(S.EMAIL_CLICK, control)
    staffed.add_member(S.EMAIL_CLICK, contact)

    staffed.assign(S.EMAIL_CLICK)

    assert staffed.assignment(control).outcome is AssignmentOutcome.REASSIGNED
    decided = staffed.assignment(contact)
    assert decided.outcome is AssignmentOutcome.KEPT_OWNER
    assert decided.hubspotOwnerId is None and decided.callAssignedTo is None  # left alone
