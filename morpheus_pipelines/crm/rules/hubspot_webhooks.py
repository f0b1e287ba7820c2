"""HubSpot's webhook deliveries, as rules (docs/hubspot-webhooks.md): the v3 signature, the
time window and what a delivery must hold, and what each event is to us.

Pure: no HTTP, no database. The endpoint (``crm.api.webhooks``) hands in the method, the URI,
the raw body, the headers' values and "now".

* The v3 signature is the base64 of HMAC-SHA256, keyed by the app's client secret, over
  ``method + URI + raw body + timestamp`` (the ``X-HubSpot-Request-Timestamp`` header, epoch
  milliseconds), compared in constant time.
* The URI is the public URL the sender was given (``MORPHEUS_PUBLIC_URL``) followed by the
  request's path and query, when that URL is set; else the URL the request itself arrived at
  (behind a proxy that rewrites host or scheme the two differ, hence the setting).
* A timestamp more than five minutes old is refused (a captured delivery cannot be replayed
  later), and so is one more than five minutes ahead of our clock.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from morpheus_pipelines.crm.rules.delivery_json import InvalidDelivery, SignatureRefused

SIGNATURE_HEADER = "X-HubSpot-Signature-v3"
TIMESTAMP_HEADER = "X-HubSpot-Request-Timestamp"
MAX_TIMESTAMP_AGE = timedelta(minutes=5)
MAX_TIMESTAMP_LEAD = timedelta(minutes=5)  # how far ahead of our clock a sender's may run
MAX_EVENTS_PER_DELIVERY = 100

OWNER_PROPERTY = "hubspot_owner_id"
CALL_ASSIGNED_PROPERTY = "call_assigned_to"
OPT_OUT_PROPERTY = "hs_email_optout"
DEAL_PROPERTIES = frozenset({"dealstage", OWNER_PROPERTY})


class WebhookEventStatus(enum.StrEnum):
    """What became of a received event (``hubspot_webhook_events.status``)."""

    APPLIED = "applied"  # applied in the request that delivered it
    PENDING = "pending"  # needs a read from HubSpot first: applied later by a worker
    IGNORED = "ignored"  # nothing of ours depends on it


# -- the signature ----------------------------------------------------------------------------


def signed_uri(public_url: str | None, path: str, query: str, request_url: str) -> str:
    """The URI the signature covers: ``public_url`` + path (+ ``?query``) when a public URL is
    configured, else the request's own URL."""
    if not public_url:
        return request_url
    uri = public_url.rstrip("/") + path
    return f"{uri}?{query}" if query else uri


def v3_signature(client_secret: str, method: str, uri: str, body: bytes, timestamp: str) -> str:
    """The base64 HMAC-SHA256 HubSpot puts in ``X-HubSpot-Signature-v3``."""
    message = method.upper().encode() + uri.encode() + body + timestamp.encode()
    digest = hmac.new(client_secret.encode(), message, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_signature(
    client_secret: str,
    *,
    method: str,
    uri: str,
    body: bytes,
    signature: str | None,
    timestamp: str | None,
    now: datetime,
) -> None:
    """Return when the delivery is HubSpot's and recent; else raise :class:`SignatureRefused`.
    The time is checked first, so a stale delivery is refused whatever its signature."""
    if not client_secret:
        raise SignatureRefused("webhook_secret_not_configured")
    if not signature or not timestamp:
        raise SignatureRefused("missing_signature")
    sent_at = _timestamp(timestamp)
    if now - sent_at > MAX_TIMESTAMP_AGE:
        raise SignatureRefused("stale_timestamp")
    if sent_at - now > MAX_TIMESTAMP_LEAD:
        raise SignatureRefused("timestamp_in_the_future")
    expected = v3_signature(client_secret, method, uri, body, timestamp)
    if not hmac.compare_digest(expected.encode(), signature.strip().encode()):
        raise SignatureRefused("invalid_signature")


def _timestamp(value: str) -> datetime:
    text = value.strip()
    if not text.isdigit() or len(text) > 16:
        raise SignatureRefused("invalid_timestamp")
    return datetime.fromtimestamp(int(text) / 1000, UTC)


# -- the delivery -----------------------------------------------------------------------------


@dataclass(frozen=True)
class WebhookEvent:
    """One event of a delivery: HubSpot's fields we use, and the event as it was sent."""

    event_id: int
    portal_id: int
    subscription_type: str
    object_id: int
    occurred_at: datetime
    property_name: str | None
    property_value: str | None
    payload: Mapping[str, Any]

    @property
    def merged_object_ids(self) -> list[int]:
        return [int(i) for i in self.payload.get("mergedObjectIds") or []]

    @property
    def surviving_object_id(self) -> int:
        """The contact a merge leaves: ``newObjectId`` when HubSpot made a new record, else
        ``primaryObjectId``, else the event's object."""
        for name in ("newObjectId", "primaryObjectId"):
            if _is_id(self.payload.get(name)):
                return int(self.payload[name])
        return self.object_id


_REQUIRED_IDS = ("eventId", "portalId", "objectId")


def parse_delivery(body: bytes) -> list[WebhookEvent]:
    """The events of a delivery: a JSON array of 1 to 100 objects, each with ``eventId``,
    ``portalId``, ``objectId`` (positive integers), ``subscriptionType`` (text) and
    ``occurredAt`` (epoch milliseconds); ``propertyName``/``propertyValue`` when present are
    text. Raises :class:`InvalidDelivery` naming the first field refused."""
    try:
        raw = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise InvalidDelivery("body", "expected a JSON array of events") from None
    if not isinstance(raw, list):
        raise InvalidDelivery("body", "expected a JSON array of events")
    if not 1 <= len(raw) <= MAX_EVENTS_PER_DELIVERY:
        raise InvalidDelivery("body", f"1 to {MAX_EVENTS_PER_DELIVERY} events per delivery")
    return [_event(i, item) for i, item in enumerate(raw)]


def _event(index: int, item: Any) -> WebhookEvent:
    where = f"[{index}]"
    if not isinstance(item, dict):
        raise InvalidDelivery(where, "expected an event object")
    for name in _REQUIRED_IDS:
        if not _is_id(item.get(name)):
            raise InvalidDelivery(f"{where}.{name}", "a positive integer is required")
    kind = item.get("subscriptionType")
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidDelivery(f"{where}.subscriptionType", "text is required")
    occurred = item.get("occurredAt")
    if not _is_id(occurred) or occurred > 10**14:
        raise InvalidDelivery(f"{where}.occurredAt", "epoch milliseconds are required")
    for name in ("propertyName", "propertyValue"):
        if item.get(name) is not None and not isinstance(item[name], str):
            raise InvalidDelivery(f"{where}.{name}", "text is expected")
    if kind.strip() == "contact.merge":
        merged = item.get("mergedObjectIds")
        if not isinstance(merged, list) or not merged or not all(_is_id(i) for i in merged):
            raise InvalidDelivery(
                f"{where}.mergedObjectIds", "a non-empty list of positive integers is required"
            )
    return WebhookEvent(
        event_id=int(item["eventId"]),
        portal_id=int(item["portalId"]),
        subscription_type=kind.strip(),
        object_id=int(item["objectId"]),
        occurred_at=datetime.fromtimestamp(occurred / 1000, UTC),
        property_name=item.get("propertyName"),
        property_value=item.get("propertyValue"),
        payload=item,
    )


def _is_id(value: Any) -> bool:
    # bool is an int in Python; HubSpot's ids never are.
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63


# -- what an event is to us -------------------------------------------------------------------


class EventAction(enum.StrEnum):
    """What applying an event does."""

    SET_OWNER = "set_owner"  # contact's and its leads' hubspot_owner_id
    SET_CALL_ASSIGNED = "set_call_assigned"  # contact's call_assigned_to
    SET_OPT_OUT = "set_opt_out"  # the newsletter opt-out, through the out-of-order guard
    DELETE_CONTACT = "delete_contact"
    MERGE_CONTACTS = "merge_contacts"
    DEAL_CHANGE = "deal_change"  # needs the deal's contacts from HubSpot: stored pending
    NONE = "none"  # nothing of ours depends on it: stored ignored


def action_of(event: WebhookEvent) -> EventAction:
    """What ``event`` asks of us (the status it is stored with follows from it)."""
    kind, name = event.subscription_type, event.property_name
    if kind == "contact.propertyChange":
        return {
            OWNER_PROPERTY: EventAction.SET_OWNER,
            CALL_ASSIGNED_PROPERTY: EventAction.SET_CALL_ASSIGNED,
            OPT_OUT_PROPERTY: EventAction.SET_OPT_OUT,
        }.get(name or "", EventAction.NONE)
    if kind == "contact.deletion":
        return EventAction.DELETE_CONTACT
    if kind == "contact.merge":
        return EventAction.MERGE_CONTACTS
    if kind == "deal.propertyChange" and name in DEAL_PROPERTIES:
        return EventAction.DEAL_CHANGE
    return EventAction.NONE


def opted_out(value: str | None) -> bool:
    """``hs_email_optout``'s value as HubSpot sends it (``"true"``/``"false"``)."""
    return (value or "").strip().lower() == "true"


def owner_value(value: str | None) -> str | None:
    """An owner property's new value; a cleared property (``""``) is no owner."""
    text = (value or "").strip()
    return text or None


def in_applying_order(events: Sequence[WebhookEvent]) -> list[WebhookEvent]:
    """The events in the order they happened (``occurredAt``, then ``eventId``): a delivery
    is not ordered, and two changes of one property must end on the later."""
    return sorted(events, key=lambda e: (e.occurred_at, e.event_id))
