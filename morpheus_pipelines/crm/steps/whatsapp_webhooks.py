"""What the WhatsApp Cloud API tells us, applied (docs/senders.md, "WhatsApp"): a message a
person sent becomes an inbound WhatsApp activity of their lead — the real event that opens
the 24-hour window — and a status of a message we sent moves that message forward.

Each is idempotent: an activity's external id is ``whatsapp:<message id>`` (one per message,
however often Meta delivers it), and a status only ever moves a message forward, so statuses
arriving twice or out of order leave the latest one."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from morpheus_pipelines.crm.models import ActivityType
from morpheus_pipelines.crm.rules.lead_status import MessageStatus
from morpheus_pipelines.crm.rules.meta_webhooks import InboundWhatsApp, WhatsAppStatus
from morpheus_pipelines.crm.store import CrmStore

WHATSAPP_SOURCE = "whatsapp"
ACTIVITY_PREFIX = "whatsapp:"


def inbound_message_lead(
    store: CrmStore, message: InboundWhatsApp
) -> tuple[uuid.UUID | None, uuid.UUID | None]:
    """``(subscription, lead)`` of a message: the subscription whose WhatsApp Business number
    received it (``None``: not ours) and its lead with the sender's number (``None``: none
    yet)."""
    session = store.session
    subscription_id = store.subscriptions.by_whatsapp_phone_number_id(
        session, message.phone_number_id
    )
    if subscription_id is None:
        return None, None
    return subscription_id, store.timeline.latest_lead_by_phone(
        session, subscription_id, message.from_e164
    )


def record_inbound_message(
    store: CrmStore, subscription_id: uuid.UUID, lead_id: uuid.UUID, message: InboundWhatsApp
) -> bool:
    """The message on the lead's timeline; ``False`` when it was recorded before."""
    _, created = store.timeline.record(
        store.session,
        {
            "subscriptionId": subscription_id,
            "externalId": ACTIVITY_PREFIX + message.message_id,
            "type": ActivityType.WHATSAPP,
            "direction": "inbound",
            "leadId": lead_id,
            "occurredAt": message.sent_at,
            "body": message.text,
            "metadata": {
                "recorded_by": "meta_webhook",
                "whatsapp_message_id": message.message_id,
                "message_type": message.kind,
                "phone_number_id": message.phone_number_id,
            },
        },
    )
    return created


def record_statuses(store: CrmStore, statuses: list[WhatsAppStatus]) -> dict[str, Any]:
    """Each status applied to the message it names; counted as applied or unchanged (a
    repeat, an older status, or a message that is not ours)."""
    counts: Counter[str] = Counter()
    for status in statuses:
        changed = store.messages.record_provider_status(
            store.session,
            status.message_id,
            MessageStatus(status.status),
            status.at,
            failure_code=status.error_code,
            failure_reason=status.error_reason,
        )
        counts["statuses_applied" if changed else "statuses_unchanged"] += 1
    return dict(counts)
