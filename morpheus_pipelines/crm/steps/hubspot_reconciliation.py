"""The HubSpot reconciliation (docs/hubspot-webhooks.md, "The reconciliation"): what webhooks
would have changed, re-read from HubSpot, so that a delivery HubSpot never made is not lost.

Two parts, each with its own cursor in ``configs`` (``hubspot_reconciliation_contacts_cursor:
<subscription>`` and ``…_deals_cursor:<subscription>``):

1. The contacts HubSpot changed since the contacts cursor (minus an overlap): their owner,
   ``call_assigned_to`` and opt-out applied through the webhook path's own writes
   (:class:`HubSpotWebhookRepository` and ``TargetEmailsRepository.set_newsletter_opt_out``),
   one transaction per page. A change a webhook applied that is newer than HubSpot's read of
   the contact is left alone.
2. The deals HubSpot changed since the deals cursor: a deal in a closed stage closes its
   contacts' open leads through the deal worker's :func:`close_deal_leads`, at the time it
   entered the stage (HubSpot's ``dealstage`` history), one transaction per page.

Every write is "set it unless it holds it already", so re-reading the overlap, a second run,
or a run after the webhooks did arrive changes nothing. A cursor moves only after its part was
read whole; a HubSpot failure raises, and the next run reads the same window again.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.rules.hubspot_deals import STAGE_PROPERTY, lead_status_of_stage
from morpheus_pipelines.crm.rules.hubspot_engagements import hubspot_time
from morpheus_pipelines.crm.rules.hubspot_reconciliation import (
    CONTACT_MODIFIED_PROPERTY,
    CONTACT_PROPERTIES,
    DEAL_MODIFIED_PROPERTY,
    DEAL_PROPERTIES,
    DEFAULT_OVERLAP,
    FIRST_RUN_LOOKBACK,
    contact_changes,
    window_start,
)
from morpheus_pipelines.crm.rules.hubspot_webhooks import CALL_ASSIGNED_PROPERTY, OWNER_PROPERTY
from morpheus_pipelines.crm.steps.hubspot_deals import close_deal_leads
from morpheus_pipelines.crm.steps.watermarks import move_watermark, read_watermark
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient


def contacts_cursor_key(subscription_id: uuid.UUID) -> str:
    return f"hubspot_reconciliation_contacts_cursor:{subscription_id}"


def deals_cursor_key(subscription_id: uuid.UUID) -> str:
    return f"hubspot_reconciliation_deals_cursor:{subscription_id}"


@dataclass
class Reconciliation:
    """What one run read and changed; each part's window start and cursor after the run."""

    contacts_window_start: datetime | None = None
    contacts_cursor: datetime | None = None
    deals_window_start: datetime | None = None
    deals_cursor: datetime | None = None
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def changes(self) -> int:
        return sum(v for k, v in self.counts.items() if not k.endswith("_read"))


def receives_webhooks(session_factory: SessionFactory, subscription_id: uuid.UUID) -> bool:
    """Whether the subscription answers for a HubSpot portal (its webhooks can be missed)."""
    with session_factory() as session:
        return CrmStore(session).webhooks.portal_of(session, subscription_id) is not None


def reconcile_with_hubspot(
    client: HubSpotClient,
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    overlap: timedelta = DEFAULT_OVERLAP,
    first_run_lookback: timedelta = FIRST_RUN_LOOKBACK,
    now: datetime | None = None,
) -> Reconciliation:
    """Re-read the contacts, then the deals, HubSpot changed since each cursor, and apply
    what their webhooks would have."""
    now = now or datetime.now(UTC)
    run = Reconciliation()
    key = contacts_cursor_key(subscription_id)
    cursor = read_watermark(session_factory, key)
    run.contacts_window_start = window_start(
        cursor, now=now, overlap=overlap, first_run_lookback=first_run_lookback
    )
    newest = cursor
    for page in client.iter_contacts_modified_since(run.contacts_window_start, CONTACT_PROPERTIES):
        with session_factory() as session:
            _apply_contacts(CrmStore(session), subscription_id, page, run.counts)
        newest = _newest(newest, page, CONTACT_MODIFIED_PROPERTY)
    run.contacts_cursor = move_watermark(session_factory, key, cursor, newest, subscription_id)

    key = deals_cursor_key(subscription_id)
    cursor = read_watermark(session_factory, key)
    run.deals_window_start = window_start(
        cursor, now=now, overlap=overlap, first_run_lookback=first_run_lookback
    )
    newest = cursor
    for page in client.iter_deals_modified_since(run.deals_window_start, DEAL_PROPERTIES):
        run.counts["deals_read"] += len(page)
        closed = [
            str(d["id"]) for d in page if lead_status_of_stage(_properties(d).get(STAGE_PROPERTY))
        ]
        stages = client.read_deal_stages(closed) if closed else {}
        contacts = client.read_deal_contacts(closed) if closed else {}
        with session_factory() as session:
            store = CrmStore(session)
            for deal_id in closed:
                found = stages.get(deal_id)
                close_as = lead_status_of_stage(found.stage if found else None)
                if found is None or close_as is None:
                    continue  # reopened or deleted between the search and the read
                run.counts["closed_deals_read"] += 1
                at = found.entered_at or hubspot_time(
                    _modified_of(page, deal_id, DEAL_MODIFIED_PROPERTY)
                )
                run.counts[f"leads_closed_{close_as}"] += close_deal_leads(
                    store, subscription_id, contacts.get(deal_id, []), close_as, at or now
                )
        newest = _newest(newest, page, DEAL_MODIFIED_PROPERTY)
    run.deals_cursor = move_watermark(session_factory, key, cursor, newest, subscription_id)
    return run


def _apply_contacts(
    store: CrmStore, subscription_id: uuid.UUID, page: list[dict[str, Any]], counts: Counter[str]
) -> None:
    """One page of HubSpot contacts, applied in the caller's one transaction."""
    session, webhooks = store.session, store.webhooks
    counts["contacts_read"] += len(page)
    mirror = webhooks.contact_mirror(session, subscription_id, (str(c["id"]) for c in page))
    if not mirror:
        return
    portal_id = webhooks.portal_of(session, subscription_id)
    for contact in page:
        hubspot_id = str(contact["id"])
        if hubspot_id not in mirror:
            continue  # a contact we know nothing of
        properties = _properties(contact)
        read_at = hubspot_time(properties.get(CONTACT_MODIFIED_PROPERTY))
        changes = contact_changes(properties, mirror[hubspot_id])
        newer = _webhook_newer_than(store, portal_id, hubspot_id, read_at)
        if not newer(OWNER_PROPERTY):
            if changes.owner_differs:
                counts["contact_owners_set"] += webhooks.set_contact_properties(
                    session, subscription_id, hubspot_id, {"hubspotOwnerId": changes.owner}
                )
            # A lead always has an owner: a cleared HubSpot owner leaves the lead's as it is.
            if changes.owner is not None:
                counts["lead_owners_set"] += webhooks.set_lead_owner(
                    session, subscription_id, hubspot_id, changes.owner
                )
        if changes.call_assigned_differs and not newer(CALL_ASSIGNED_PROPERTY):
            counts["call_assigned_set"] += webhooks.set_contact_properties(
                session, subscription_id, hubspot_id, {"callAssignedTo": changes.call_assigned}
            )
        if changes.opted_out and read_at is not None:
            counts["opt_outs_applied"] += _opt_out(store, subscription_id, hubspot_id, read_at)


def _webhook_newer_than(
    store: CrmStore, portal_id: int | None, hubspot_id: str, read_at: datetime | None
) -> Callable[[str], bool]:
    """Whether a webhook change of a property of this contact, newer than HubSpot's read of
    it, was applied already (the read is then the older news)."""

    def newer(property_name: str) -> bool:
        if portal_id is None or read_at is None or not hubspot_id.isdigit():
            return False
        return store.webhooks.newer_change_applied(
            store.session,
            portal_id,
            object_id=int(hubspot_id),
            property_name=property_name,
            occurred_at=read_at,
            event_id=0,  # HubSpot's event ids are positive: no event is excluded
        )

    return newer


def _opt_out(
    store: CrmStore, subscription_id: uuid.UUID, hubspot_id: str, read_at: datetime
) -> int:
    """Opt out the contact's addresses not opted out yet; how many were."""
    applied = 0
    for email in store.webhooks.contact_emails(store.session, subscription_id, hubspot_id):
        stored = store.target_emails.get_by_subscription_and_email(
            store.session, subscription_id=subscription_id, email=email
        )
        if stored is not None and stored.newsletterOptedOut:
            continue
        applied += store.target_emails.set_newsletter_opt_out(
            store.session,
            subscription_id=subscription_id,
            email=email,
            opted_out=True,
            occurred_at=read_at,
        )
    return applied


def _properties(item: dict[str, Any]) -> dict[str, Any]:
    return item.get("properties") or {}


def _modified_of(page: list[dict[str, Any]], record_id: str, name: str) -> Any:
    return next((_properties(r).get(name) for r in page if str(r["id"]) == record_id), None)


def _newest(newest: datetime | None, page: list[dict[str, Any]], name: str) -> datetime | None:
    for item in page:
        modified = hubspot_time(_properties(item).get(name))
        if modified is not None and (newest is None or modified > newest):
            newest = modified
    return newest
