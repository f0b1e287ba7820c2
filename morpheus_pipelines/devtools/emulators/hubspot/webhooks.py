"""HubSpot's side of webhooks: deliveries POSTed to a target URL the way HubSpot sends them.

A delivery is a JSON array of events (``eventId``, ``subscriptionId``, ``portalId``,
``appId``, ``occurredAt`` in epoch milliseconds, ``subscriptionType``, ``attemptNumber``,
``objectId``, ``changeSource``, and ``propertyName``/``propertyValue`` for property changes,
``mergedObjectIds``/``primaryObjectId``/``newObjectId``/``numberOfPropertiesMoved`` for
merges), signed with HubSpot's v3 scheme: header ``X-HubSpot-Request-Timestamp`` (epoch ms)
and ``X-HubSpot-Signature-v3``, the base64 HMAC-SHA256 under the app's client secret of the
UTF-8 text ``POST`` + target URL + body + timestamp.

The signature is computed here on its own, not with the service's rule, so a delivery the
service accepts shows that the two agree on the scheme.

    sender = WebhookSender(url, "client-secret", portal_id=62515)
    sender.send([sender.property_change(501, "hubspot_owner_id", "102")])
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import requests


class WebhookSender:
    """Builds and sends one app's deliveries for one portal to ``url``."""

    def __init__(
        self,
        url: str,
        client_secret: str,
        *,
        portal_id: int,
        app_id: int = 54321,
        first_event_id: int = 1000,
    ) -> None:
        self.url = url
        self.client_secret = client_secret
        self.portal_id = portal_id
        self.app_id = app_id
        self._event_ids = itertools.count(first_event_id)
        self._subscription_ids: dict[str, int] = {}

    # -- events ------------------------------------------------------------------------------

    def event(
        self, subscription_type: str, object_id: int, *, occurred_at: datetime | None = None
    ) -> dict[str, Any]:
        """One event's common fields (a new ``eventId`` each time)."""
        subscription_id = self._subscription_ids.setdefault(
            subscription_type, 100 + len(self._subscription_ids)
        )
        when = occurred_at.timestamp() if occurred_at else time.time()
        return {
            "eventId": next(self._event_ids),
            "subscriptionId": subscription_id,
            "portalId": self.portal_id,
            "appId": self.app_id,
            "occurredAt": int(when * 1000),
            "subscriptionType": subscription_type,
            "attemptNumber": 0,
            "objectId": object_id,
            "changeSource": "CRM_UI",
        }

    def property_change(
        self,
        object_id: int,
        name: str,
        value: str,
        *,
        object_type: str = "contact",
        occurred_at: datetime | None = None,
    ) -> dict[str, Any]:
        event = self.event(f"{object_type}.propertyChange", object_id, occurred_at=occurred_at)
        return event | {"propertyName": name, "propertyValue": value}

    def deletion(self, object_id: int, *, occurred_at: datetime | None = None) -> dict[str, Any]:
        return self.event("contact.deletion", object_id, occurred_at=occurred_at)

    def merge(
        self, primary_id: int, merged_ids: Sequence[int], *, occurred_at: datetime | None = None
    ) -> dict[str, Any]:
        event = self.event("contact.merge", primary_id, occurred_at=occurred_at)
        return event | {
            "primaryObjectId": primary_id,
            "mergedObjectIds": list(merged_ids),
            "newObjectId": primary_id,
            "numberOfPropertiesMoved": 1,
        }

    # -- deliveries --------------------------------------------------------------------------

    def body(self, events: Sequence[dict[str, Any]]) -> bytes:
        return json.dumps(list(events), separators=(",", ":")).encode("utf-8")

    def headers(self, body: bytes, *, timestamp_ms: int | None = None) -> dict[str, str]:
        """The headers HubSpot sends with ``body``, signed for this sender's URL."""
        stamp = str(int(time.time() * 1000) if timestamp_ms is None else timestamp_ms)
        source = b"POST" + self.url.encode("utf-8") + body + stamp.encode("ascii")
        mac = hmac.new(self.client_secret.encode("utf-8"), source, digestmod=hashlib.sha256)
        return {
            "Content-Type": "application/json",
            "X-HubSpot-Request-Timestamp": stamp,
            "X-HubSpot-Signature-v3": base64.b64encode(mac.digest()).decode("ascii"),
        }

    def send(
        self,
        events: Sequence[dict[str, Any]],
        *,
        timestamp_ms: int | None = None,
        timeout: float = 10.0,
    ) -> requests.Response:
        """POST one delivery of ``events``, signed; the response as it came."""
        body = self.body(events)
        return requests.post(
            self.url,
            data=body,
            headers=self.headers(body, timestamp_ms=timestamp_ms),
            timeout=timeout,
        )

    def resend(
        self, events: Sequence[dict[str, Any]], *, timeout: float = 10.0
    ) -> requests.Response:
        """The same events again, as HubSpot's retry sends them: a later attempt, freshly
        signed."""
        retried = [event | {"attemptNumber": event.get("attemptNumber", 0) + 1} for event in events]
        return self.send(retried, timeout=timeout)
