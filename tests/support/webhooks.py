"""A subscription that answers for a HubSpot portal, the intake service with a client secret,
and the emulator's webhook sender aimed at it, for the webhook tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import func, select

from morpheus_pipelines.crm.api.webhooks import PATH
from morpheus_pipelines.crm.models import Contact, HubSpotWebhookEvent, Lead, Subscription
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators.hubspot import WebhookSender
from tests.support.intake import Tenant, intake_settings, serving

CLIENT_SECRET = "webhook-client-secret-0f3c"
PORTAL_ID = 62515


@contextmanager
def hooked_service(url: str, **overrides: Any) -> Iterator[tuple[str, Any]]:
    """The intake service with the webhook client secret configured."""
    settings = intake_settings(url, **({"hubspot_client_secret": CLIENT_SECRET} | overrides))
    with serving(settings) as running:
        yield running


class Portal(Tenant):
    """A :class:`Tenant` whose subscription answers for :data:`PORTAL_ID`."""

    def __init__(self, url: str, portal_id: int = PORTAL_ID) -> None:
        super().__init__(url)
        self.portal_id = portal_id
        with get_session(url) as session:
            session.get(Subscription, self.subscription_id).hubspotPortalId = portal_id

    def sender(self, base: str, **options: Any) -> WebhookSender:
        return WebhookSender(
            f"{base}{PATH}", options.pop("secret", CLIENT_SECRET), portal_id=self.portal_id
        )

    def add_contact(self, hubspot_id: int, *, owner: str | None = None, **values: Any) -> int:
        with get_session(self.url) as session:
            contact = Contact(
                subscriptionId=self.subscription_id,
                email=values.pop("email", f"person{hubspot_id}@customer.example"),
                hubspotContactId=str(hubspot_id),
                hubspotOwnerId=owner,
                **values,
            )
            session.add(contact)
            session.flush()
            return contact.id

    def contact(self, contact_id: int) -> Contact:
        with get_session(self.url) as session:
            return session.get(Contact, contact_id)

    def link_lead(self, lead_id: str, hubspot_id: int) -> None:
        """What the outbox will do once the lead is a HubSpot contact."""
        with get_session(self.url) as session:
            session.get(Lead, lead_id).hubspotContactId = str(hubspot_id)

    def lead(self, lead_id: str) -> Lead:
        with get_session(self.url) as session:
            return session.get(Lead, lead_id)

    def events(self) -> list[HubSpotWebhookEvent]:
        with get_session(self.url) as session:
            return list(
                session.scalars(select(HubSpotWebhookEvent).order_by(HubSpotWebhookEvent.eventId))
            )


def stored_events(url: str) -> int:
    with get_session(url) as session:
        return session.scalar(select(func.count()).select_from(HubSpotWebhookEvent))
