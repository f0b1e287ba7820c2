"""The HubSpot engagement sync (docs/leads.md, "The HubSpot engagement sync"): calls,
emails, meetings and notes modified since the watermark, minus an overlap, upserted into
``activities`` on ``(subscriptionId, externalId)`` with the activities contract's update
columns. The overlap re-reads what HubSpot's search index may have shown late; the upsert
makes re-reading free of duplicates. The watermark moves only after every type was read, so a
failed run is redone whole by the next one.
"""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.rules.hubspot_engagements import (
    ENGAGEMENT_PROPERTIES,
    engagement_activity,
    hubspot_time,
)
from morpheus_pipelines.crm.rules.watermarks import window_start
from morpheus_pipelines.crm.steps.watermarks import move_watermark, read_watermark
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import BATCH_READ_SIZE, HubSpotClient

# The engagement sync's upsert, exactly as the activities contract fixes it.
CONFLICT_COLUMNS = ["subscriptionId", "externalId"]
UPDATE_COLUMNS = [
    "type",
    "hubspotEngagementId",
    "subject",
    "body",
    "status",
    "direction",
    "contactId",
    "contactEmail",
    "hubspotContactId",
    "metadata",
    "updatedAt",
]
DEFAULT_OVERLAP = timedelta(hours=1)
FIRST_RUN_LOOKBACK = timedelta(days=30)


def watermark_key(subscription_id: uuid.UUID) -> str:
    return f"hubspot_engagement_sync_watermark:{subscription_id}"


@dataclass
class EngagementSync:
    window_start: datetime
    watermark: datetime | None = None
    counts: Counter[str] = field(default_factory=Counter)


def _chunks(items: list[str], size: int = BATCH_READ_SIZE) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def sync_engagements(
    client: HubSpotClient,
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    overlap: timedelta = DEFAULT_OVERLAP,
    now: datetime | None = None,
) -> EngagementSync:
    now = now or datetime.now(UTC)
    key = watermark_key(subscription_id)
    previous = read_watermark(session_factory, key)
    start = window_start(previous, now=now, overlap=overlap, first_run_lookback=FIRST_RUN_LOOKBACK)
    sync = EngagementSync(window_start=start, watermark=previous)
    newest = previous
    since_ms = int(start.timestamp() * 1000)
    for object_type, properties in ENGAGEMENT_PROPERTIES.items():
        for page in client.iter_engagement_pages(
            object_type, modified_since_ms=since_ms, properties=properties
        ):
            ids = [str(item["id"]) for item in page]
            contacts = client.read_engagement_contacts(object_type, ids)
            contact_ids = sorted({c for found in contacts.values() for c in found})
            emails: dict[str, str] = {}
            for chunk in _chunks(contact_ids):
                emails |= client.read_contact_emails(chunk)
            with session_factory() as session:
                store = CrmStore(session)
                leads = store.timeline.latest_leads_by_email(
                    session, subscription_id, sorted({e.lower() for e in emails.values()})
                )
                for item in page:
                    modified = _write(
                        store, subscription_id, object_type, item, contacts, emails, leads
                    )
                    sync.counts[object_type] += 1
                    if modified and (newest is None or modified > newest):
                        newest = modified
            sync.counts["pages"] += 1
    sync.watermark = move_watermark(session_factory, key, previous, newest, subscription_id)
    return sync


def _write(
    store: CrmStore,
    subscription_id: uuid.UUID,
    object_type: str,
    item: dict[str, Any],
    contacts: dict[str, list[str]],
    emails: dict[str, str],
    leads: dict[str, uuid.UUID],
) -> datetime | None:
    properties = item.get("properties") or {}
    engagement_id = str(item["id"])
    if store.activities.written_to_hubspot_as(store.session, subscription_id, engagement_id):
        # Our own AI call, written by the outbox: already on the timeline under its own id.
        return hubspot_time(properties.get("hs_lastmodifieddate"))
    fields = engagement_activity(object_type, properties)
    hubspot_contact_id = next(iter(contacts.get(engagement_id) or ()), None)
    email = emails.get(hubspot_contact_id or "", "").lower() or None
    local = (
        store.contacts.get_by_hubspot_contact_id(store.session, hubspot_contact_id)
        if hubspot_contact_id
        else None
    )
    if local is not None and local.subscriptionId != subscription_id:
        local = None  # another workspace's contact with the same HubSpot id
    data = fields | {
        "subscriptionId": subscription_id,
        "externalId": engagement_id,
        "hubspotEngagementId": engagement_id,
        "contactId": local.id if local else None,
        "contactEmail": email,
        "hubspotContactId": hubspot_contact_id,
        "leadId": leads.get(email) if email else None,
        "updatedAt": datetime.now(UTC),
    }
    if data["occurredAt"] is None:
        del data["occurredAt"]  # the column default: when we learnt of it
    stored = store.activities.upsert(
        store.session, data, conflict_columns=CONFLICT_COLUMNS, update_columns=UPDATE_COLUMNS
    )
    if stored.leadId is None and data["leadId"] is not None:
        # The contract's update columns leave leadId alone; an engagement synced before its contact
        # became a lead joins the lead's timeline when the overlap reads it again.
        stored.leadId = data["leadId"]
        store.session.flush()
    return hubspot_time(properties.get("hs_lastmodifieddate"))
