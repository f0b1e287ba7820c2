"""Receiving one HubSpot webhook delivery (docs/hubspot-webhooks.md), inside the caller's one
transaction: store each event once, apply the new contact events in the order they happened,
leave deal events pending for the worker that reads the deal's contacts from HubSpot.

1. ``portalId`` selects the subscription (``subscriptions.hubspotPortalId``); events of a
   portal no subscription answers for are counted, logged and dropped.
2. Every event of a known portal is inserted ``ON CONFLICT ("portalId", "eventId") DO
   NOTHING``; only the ones inserted now go on, so a replayed delivery changes nothing.
3. The new events are applied in ``occurredAt`` order. An owner or ``call_assigned_to`` change
   older than one already applied for the same contact is not applied (deliveries overlap and
   arrive out of order); the opt-out has its own guard for that.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from morpheus_pipelines.crm.rules.hubspot_webhooks import (
    EventAction,
    WebhookEvent,
    WebhookEventStatus,
    action_of,
    in_applying_order,
    opted_out,
    owner_value,
)
from morpheus_pipelines.crm.store import CrmStore

_PLANNED_STATUS = {
    EventAction.DEAL_CHANGE: WebhookEventStatus.PENDING,
    EventAction.NONE: WebhookEventStatus.IGNORED,
}


@dataclass
class DeliveryOutcome:
    """What one delivery did, for the answer and the ``hubspot_webhook_received`` line."""

    events: int = 0
    replayed: int = 0
    unknown_portal_ids: list[int] = field(default_factory=list)
    unknown_portal_events: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "new": sum(self.statuses.values()),
            "replayed": self.replayed,
            "applied": self.statuses[WebhookEventStatus.APPLIED],
            "pending": self.statuses[WebhookEventStatus.PENDING],
            "ignored": self.statuses[WebhookEventStatus.IGNORED],
            "unknown_portal_events": self.unknown_portal_events,
        }


def receive_delivery(
    store: CrmStore, events: Sequence[WebhookEvent], *, now: datetime
) -> DeliveryOutcome:
    """Store and apply one delivery's events; the caller commits (or rolls back) it all."""
    outcome = DeliveryOutcome(events=len(events))
    subscriptions = store.webhooks.subscriptions_of_portals(
        store.session, (e.portal_id for e in events)
    )
    by_portal: dict[int, list[WebhookEvent]] = {}
    for event in events:
        by_portal.setdefault(event.portal_id, []).append(event)
    for portal_id, portal_events in sorted(by_portal.items()):
        subscription_id = subscriptions.get(portal_id)
        if subscription_id is None:
            outcome.unknown_portal_ids.append(portal_id)
            outcome.unknown_portal_events += len(portal_events)
            continue
        _receive_portal(store, subscription_id, portal_id, portal_events, now, outcome)
    return outcome


def _receive_portal(
    store: CrmStore,
    subscription_id: uuid.UUID,
    portal_id: int,
    events: list[WebhookEvent],
    now: datetime,
    outcome: DeliveryOutcome,
) -> None:
    rows = [_row(subscription_id, event, now) for event in events]
    new_ids = store.webhooks.record_new(store.session, rows)
    new_events = {e.event_id: e for e in events if e.event_id in new_ids}
    outcome.replayed += len(events) - len(new_events)
    for event in in_applying_order(list(new_events.values())):
        action = action_of(event)
        status = _PLANNED_STATUS.get(action)
        if status is None:
            status = _apply(store, subscription_id, portal_id, event, action)
            if status is not WebhookEventStatus.APPLIED:
                store.webhooks.set_status(store.session, portal_id, [event.event_id], status)
        outcome.statuses[status] += 1
        outcome.actions[action] += 1


def _row(subscription_id: uuid.UUID, event: WebhookEvent, now: datetime) -> dict[str, Any]:
    status = _PLANNED_STATUS.get(action_of(event), WebhookEventStatus.APPLIED)
    return {
        "subscriptionId": subscription_id,
        "portalId": event.portal_id,
        "eventId": event.event_id,
        "subscriptionType": event.subscription_type,
        "objectId": event.object_id,
        "propertyName": event.property_name,
        "propertyValue": event.property_value,
        "occurredAt": event.occurred_at,
        "payload": dict(event.payload),
        "status": status.value,
        "appliedAt": now if status is WebhookEventStatus.APPLIED else None,
    }


def _apply(
    store: CrmStore,
    subscription_id: uuid.UUID,
    portal_id: int,
    event: WebhookEvent,
    action: EventAction,
) -> WebhookEventStatus:
    """Apply one contact event; the status it ends with (``ignored`` when a later change of
    the same property was applied already, ``pending`` for an opt-out of a contact whose
    address we do not know: the worker reads it from HubSpot)."""
    session, webhooks = store.session, store.webhooks
    contact = str(event.object_id)
    if action in (EventAction.SET_OWNER, EventAction.SET_CALL_ASSIGNED):
        if webhooks.newer_change_applied(
            session,
            portal_id,
            object_id=event.object_id,
            property_name=event.property_name or "",
            occurred_at=event.occurred_at,
            event_id=event.event_id,
        ):
            return WebhookEventStatus.IGNORED
        value = owner_value(event.property_value)
        if action is EventAction.SET_OWNER:
            webhooks.set_contact_properties(
                session, subscription_id, contact, {"hubspotOwnerId": value}
            )
            # A lead always has an owner: a cleared HubSpot owner leaves the lead's as it is.
            if value is not None:
                webhooks.set_lead_owner(session, subscription_id, contact, value)
        else:
            webhooks.set_contact_properties(
                session, subscription_id, contact, {"callAssignedTo": value}
            )
        return WebhookEventStatus.APPLIED
    if action is EventAction.SET_OPT_OUT:
        emails = webhooks.contact_emails(session, subscription_id, contact)
        if not emails:
            return WebhookEventStatus.PENDING
        for email in emails:
            store.target_emails.set_newsletter_opt_out(
                session,
                subscription_id=subscription_id,
                email=email,
                opted_out=opted_out(event.property_value),
                occurred_at=event.occurred_at,
            )
        return WebhookEventStatus.APPLIED
    if action is EventAction.DELETE_CONTACT:
        webhooks.mark_contact_deleted(session, subscription_id, contact)
        return WebhookEventStatus.APPLIED
    if action is EventAction.MERGE_CONTACTS:
        merged = [str(i) for i in [*event.merged_object_ids, event.object_id]]
        if "primaryObjectId" in event.payload:
            merged.append(str(event.payload["primaryObjectId"]))
        webhooks.repoint_merged(session, subscription_id, merged, str(event.surviving_object_id))
        return WebhookEventStatus.APPLIED
    raise AssertionError(f"no application for {action}")  # pragma: no cover
