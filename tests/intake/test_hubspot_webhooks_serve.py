"""End to end: the HubSpot emulator's webhook sender and ``morpheus serve`` agree on HubSpot's
v3 signature (each computes it on its own), and a delivery's owner change and opt-out are
stored once (docs/hubspot-webhooks.md)."""

from __future__ import annotations

from sqlalchemy import select

from morpheus_pipelines.crm.models import Contact, TargetEmails
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators.hubspot import WebhookSender
from morpheus_pipelines.devtools.serve_process import morpheus_serve
from tests.support.webhooks import Portal

SECRET = "serve-client-secret-7d21"


def _state(url: str, portal: Portal) -> tuple:
    with get_session(url) as session:
        contact = session.scalars(select(Contact)).one()
        address = session.scalars(
            select(TargetEmails).where(TargetEmails.subscriptionId == portal.subscription_id)
        ).one()
        return (
            contact.hubspotOwnerId,
            contact.updatedAt,
            address.newsletterOptedOut,
            address.newsletterOptOutAt,
            address.updatedAt,
        )


def test_the_emulators_delivery_is_accepted_by_morpheus_serve_and_applied_once(
    database_url: str,
) -> None:
    portal = Portal(database_url)
    portal.add_contact(501, owner="101", email="pat@customer.example")
    with morpheus_serve(database_url, environ={"HUBSPOT_CLIENT_SECRET": SECRET}) as (base, _):
        sender = WebhookSender(f"{base}/v1/webhooks/hubspot", SECRET, portal_id=portal.portal_id)
        events = [
            sender.property_change(501, "hubspot_owner_id", "102"),
            sender.property_change(501, "hs_email_optout", "true"),
        ]

        first = sender.send(events)
        assert first.status_code == 200, first.text
        assert first.json()["applied"] == 2
        after_first = _state(database_url, portal)

        again = sender.resend(events)
        assert again.status_code == 200
        assert again.json()["replayed"] == 2 and again.json()["applied"] == 0
        forged = WebhookSender(sender.url, "guessed-secret", portal_id=portal.portal_id)
        assert (
            forged.send([forged.property_change(501, "hubspot_owner_id", "666")]).status_code == 401
        )

    owner, _, opted_out, opted_out_at, _ = after_first
    assert owner == "102"
    assert opted_out is True
    assert opted_out_at is not None
    assert _state(database_url, portal) == after_first  # the replay changed nothing
    assert len(portal.events()) == 2
