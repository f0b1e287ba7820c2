"""A subscription that answers for a HubSpot portal, with two reps, leads made by the intake
service and linked to HubSpot contacts, the webhook sender aimed at the service, and the
HubSpot emulator holding the portal's deals and contacts: what the deal worker and the
reconciliation tests share."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from morpheus_pipelines.crm.models import Lead, TargetEmails
from morpheus_pipelines.crm.steps.hubspot_deals import DealEventRun, apply_pending_deal_events
from morpheus_pipelines.crm.steps.hubspot_reconciliation import (
    Reconciliation,
    reconcile_with_hubspot,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.devtools.emulators.hubspot import WebhookSender
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from tests.support.intake import client, create_lead
from tests.support.webhooks import Portal, hooked_service

TOKEN = "pat-na1-deal-desk"
ANA, BEN = "101", "102"


@dataclass
class DealDesk:
    portal: Portal
    base: str
    hubspot: HubSpotEmulator
    sender: WebhookSender
    reps: dict[str, int]
    _submissions: int = 0

    @property
    def url(self) -> str:
        return self.portal.url

    def lead(self, hubspot_contact_id: int) -> uuid.UUID:
        """A lead from ``POST /v1/leads`` (charged to a rep's load), linked to the HubSpot
        contact."""
        self._submissions += 1
        lead_id = create_lead(
            client(self.portal.key), self.base, self.portal, f"s-{self._submissions}"
        )
        self.portal.link_lead(lead_id, hubspot_contact_id)
        return uuid.UUID(lead_id)

    def client(self, **options: Any) -> HubSpotClient:
        defaults: dict[str, Any] = {
            "read_timeout": 2.0,
            "connect_timeout": 2.0,
            "retry_count": 1,
            "requests_per_10s": 10_000,
            "max_backoff": 0.01,
        }
        return HubSpotClient(self.hubspot.base_url, TOKEN, **(defaults | options))

    def work(self, **options: Any) -> DealEventRun:
        """One run of the deal worker."""
        with self.client() as hubspot:
            return apply_pending_deal_events(
                hubspot, lambda: get_session(self.url), self.portal.subscription_id, **options
            )

    def reconcile(self, **options: Any) -> Reconciliation:
        """One run of the reconciliation."""
        with self.client() as hubspot:
            return reconcile_with_hubspot(
                hubspot, lambda: get_session(self.url), self.portal.subscription_id, **options
            )

    def send(self, *events: dict[str, Any]) -> dict[str, Any]:
        answer = self.sender.send(list(events))
        assert answer.status_code == 200, answer.text
        return answer.json()

    # -- reading back -------------------------------------------------------------------------

    def leads(self) -> dict[uuid.UUID, Lead]:
        with get_session(self.url) as session:
            return {lead.id: lead for lead in session.scalars(select(Lead))}

    def open_leads(self) -> dict[int, int]:
        """Each rep's ``openLeads``, by rep id."""
        return self.portal.open_leads()

    def opt_outs(self) -> dict[str, tuple[bool, Any]]:
        with get_session(self.url) as session:
            rows = session.scalars(select(TargetEmails).order_by(TargetEmails.email))
            return {r.email: (r.newsletterOptedOut, r.newsletterOptOutAt) for r in rows}


@contextmanager
def deal_desk(url: str, hubspot: HubSpotEmulator) -> Iterator[DealDesk]:
    """The desk on a fresh database and a running emulator: reps Ana (101) and Ben (102) in
    the default pool."""
    portal = Portal(url)
    reps = {ANA: portal.add_rep("ana@acme.test", ANA), BEN: portal.add_rep("ben@acme.test", BEN)}
    portal.add_pool("default", {rep: 1 for rep in reps.values()}, default=True)
    with hooked_service(url) as (base, _):
        yield DealDesk(portal, base, hubspot, portal.sender(base), reps)
