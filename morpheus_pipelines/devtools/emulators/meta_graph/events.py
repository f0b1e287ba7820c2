"""What Meta posts to our webhook endpoint: new leads, inbound WhatsApp messages and the
statuses of the messages we sent (a mixin of the emulator).

The ``deliver_*`` methods and :meth:`~WebhookEvents.send_inbound_message` post synchronously
and return the HTTP status our side answered (None when no answer came). With
``auto_status=True`` every accepted send is followed, from a background thread, by its
``sent`` and ``delivered`` statuses; a send accepted outside the window under
``reengagement_failure="webhook"`` is followed by a ``failed`` status (131047) instead.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from .errors import CLOUD_API_CODES
from .payloads import (
    inbound_message_payload,
    leadgen_payload,
    new_wamid,
    status_error,
    status_payload,
)
from .webhooks import BackgroundSender, Delivery, DeliveryLog, post_signed, verify_subscription
from .whatsapp import REENGAGEMENT_DETAILS, SERVICE_WINDOW, SentMessage, as_utc

__all__ = ["STATUSES", "WebhookEvents"]

STATUSES = ("sent", "delivered", "read", "failed")
_DEFAULT_DETAILS = {
    131000: "Message failed to send due to an unknown error.",
    131026: "Message Undeliverable.",
    131047: REENGAGEMENT_DETAILS,
}


class WebhookEvents:
    """Signed webhook deliveries and their log. Uses ``lead``, ``record_inbound`` and
    ``sent_message`` of the lead and WhatsApp mixins."""

    _lock: threading.RLock
    _now: Callable[[], datetime]
    _phone_numbers: dict[str, str]
    _sender: BackgroundSender
    deliveries: DeliveryLog
    waba_id: str
    webhook_url: str | None
    app_secret: str | None
    webhook_timeout: float
    auto_status: bool
    auto_status_delay: float

    # -- deliveries --------------------------------------------------------------------------

    def deliver_leadgen(
        self,
        page_id: str,
        leadgen_id: str,
        *,
        form_id: str | None = None,
        ad_id: str | None = None,
        created_time: datetime | None = None,
    ) -> int | None:
        """Post a Page ``leadgen`` change. For a lead added with :meth:`add_lead` the form,
        ad and creation time default to the lead's; otherwise ``form_id`` is required (and
        ``ad_id=None`` announces an organic lead)."""
        lead = self.lead(leadgen_id)
        if form_id is None:
            if lead is None:
                raise ValueError(f"lead {leadgen_id!r} is not stored: pass form_id")
            form_id = lead["form_id"]
        if ad_id is None and lead is not None:
            ad_id = lead.get("ad_id")
        if created_time is None and lead is not None:
            created_time = datetime.strptime(lead["created_time"], "%Y-%m-%dT%H:%M:%S%z")
        now = self._now()
        payload = leadgen_payload(
            page_id=str(page_id),
            leadgen_id=str(leadgen_id),
            form_id=str(form_id),
            ad_id=None if ad_id is None else str(ad_id),
            created_time=_epoch(created_time or now),
            time=_epoch(now),
        )
        return self._post("leadgen", payload).status

    def send_inbound_message(
        self,
        phone_number_id: str,
        from_wa_id: str,
        text: str,
        *,
        profile_name: str = "WhatsApp User",
        at: datetime | None = None,
        message_id: str | None = None,
    ) -> int | None:
        """A WhatsApp user writes to the business number: the window opens from ``at``
        (default now) whatever our side answers, then the ``messages`` webhook is posted."""
        display = self._display_number(phone_number_id)
        self._require_webhook()
        moment = as_utc(at) if at is not None else self._now()
        self.record_inbound(phone_number_id, from_wa_id, moment)
        payload = inbound_message_payload(
            waba_id=self.waba_id,
            phone_number_id=str(phone_number_id),
            display_phone_number=display,
            from_wa_id=str(from_wa_id),
            profile_name=profile_name,
            message_id=message_id or new_wamid(),
            timestamp=_epoch(moment),
            text=text,
        )
        return self._post("messages", payload).status

    def deliver_statuses(
        self,
        message_id: str,
        statuses: Sequence[str],
        *,
        errors: Sequence[dict[str, Any]] | None = None,
        phone_number_id: str | None = None,
        recipient_id: str | None = None,
        at: datetime | None = None,
    ) -> list[int | None]:
        """Post one status webhook per entry of ``statuses`` (``sent``, ``delivered``,
        ``read``, ``failed``) for a message the emulator accepted (or any id, given
        ``phone_number_id`` and ``recipient_id``); ``errors`` go with a ``failed`` status
        (see :meth:`deliver_failure`). Returns our side's answers in order."""
        return [
            self._deliver_status(
                message_id,
                status,
                errors=errors,
                phone_number_id=phone_number_id,
                recipient_id=recipient_id,
                at=at,
            ).status
            for status in statuses
        ]

    def deliver_failure(
        self,
        message_id: str,
        code: int = 131026,
        *,
        title: str | None = None,
        details: str | None = None,
        phone_number_id: str | None = None,
        recipient_id: str | None = None,
        at: datetime | None = None,
    ) -> int | None:
        """Post a ``failed`` status with one error (``code``, ``title``, ``message``,
        ``error_data.details``); 131026 (undeliverable) by default."""
        error = status_error(
            code,
            title or CLOUD_API_CODES.get(code, ("Message failed",))[0],
            details or _DEFAULT_DETAILS.get(code, "Message failed to send."),
        )
        return self.deliver_statuses(
            message_id,
            ["failed"],
            errors=[error],
            phone_number_id=phone_number_id,
            recipient_id=recipient_id,
            at=at,
        )[0]

    def verify_webhook(self, verify_token: str, challenge: str = "1158201444") -> bool:
        """Meta's subscription check: a GET with ``hub.mode=subscribe``, ``hub.verify_token``
        and ``hub.challenge``; True when our side answered 200 with the challenge."""
        url, _ = self._require_webhook()
        delivery = verify_subscription(
            self.deliveries, url, verify_token, challenge, timeout=self.webhook_timeout
        )
        return delivery.status == 200 and delivery.response_body.decode(errors="replace") == (
            challenge
        )

    def wait_for_deliveries(
        self, count: int, *, kind: str | None = None, timeout: float = 5.0
    ) -> list[Delivery]:
        """Block until at least ``count`` deliveries (of ``kind``) are logged; returns them
        (fewer when ``timeout`` passed first)."""
        self.deliveries.wait_until(
            lambda entries: sum(1 for d in entries if kind is None or d.kind == kind) >= count,
            timeout,
        )
        return self.deliveries.entries(kind)

    # -- internals ---------------------------------------------------------------------------

    def _after_send(self, sent: SentMessage) -> None:
        if self.webhook_url is None or self.app_secret is None:
            return
        delay = self.auto_status_delay
        if sent.failed_code is not None:
            error = status_error(
                sent.failed_code,
                CLOUD_API_CODES[sent.failed_code][0],
                _DEFAULT_DETAILS[sent.failed_code],
            )
            self._sender.submit(
                lambda: self._deliver_status(sent.wamid, "failed", errors=[error], background=True),
                delay=delay,
            )
        elif self.auto_status:
            for status in ("sent", "delivered"):
                self._sender.submit(
                    lambda status=status: self._deliver_status(sent.wamid, status, background=True),
                    delay=delay,
                )

    def _deliver_status(
        self,
        message_id: str,
        status: str,
        *,
        errors: Sequence[dict[str, Any]] | None = None,
        phone_number_id: str | None = None,
        recipient_id: str | None = None,
        at: datetime | None = None,
        background: bool = False,
    ) -> Delivery:
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        sent = self.sent_message(message_id)
        if sent is None and (phone_number_id is None or recipient_id is None):
            raise KeyError(f"no accepted send {message_id!r}: pass phone_number_id, recipient_id")
        phone_number_id = phone_number_id or sent.phone_number_id  # type: ignore[union-attr]
        recipient_id = recipient_id or sent.wa_id  # type: ignore[union-attr]
        category = sent.category if sent is not None else "service"
        moment = as_utc(at) if at is not None else self._now()
        conversation = pricing = None
        if status in ("sent", "delivered"):
            conversation = {
                "id": hashlib.md5(message_id.encode()).hexdigest(),  # an id, not a secret
                "origin": {"type": category},
            }
            if status == "sent":
                conversation["expiration_timestamp"] = str(_epoch(moment + SERVICE_WINDOW))
            billable = category != "service"
            pricing = {
                "billable": billable,
                "pricing_model": "PMP",
                "category": category,
                "type": "regular" if billable else "free_customer_service",
            }
        payload = status_payload(
            waba_id=self.waba_id,
            phone_number_id=phone_number_id,
            display_phone_number=self._display_number(phone_number_id),
            message_id=message_id,
            status=status,
            recipient_id=recipient_id,
            timestamp=_epoch(moment),
            conversation=conversation,
            pricing=pricing,
            errors=list(errors) if status == "failed" and errors else None,
        )
        return self._post("statuses", payload, background=background)

    def _display_number(self, phone_number_id: str) -> str:
        with self._lock:
            display = self._phone_numbers.get(str(phone_number_id))
        if display is None:
            raise KeyError(f"unknown phone_number_id {phone_number_id!r}")
        return display

    def _require_webhook(self) -> tuple[str, str]:
        if self.webhook_url is None or self.app_secret is None:
            raise RuntimeError("webhook deliveries need webhook_url and app_secret")
        return self.webhook_url, self.app_secret

    def _post(self, kind: str, payload: Any, *, background: bool = False) -> Delivery:
        url, secret = self._require_webhook()
        return post_signed(
            self.deliveries,
            url,
            secret,
            kind,
            payload,
            background=background,
            timeout=self.webhook_timeout,
        )


def _epoch(moment: datetime) -> int:
    return int(as_utc(moment).timestamp())
