"""The webhook payloads Meta posts, built from plain values (no IO, no emulator state).

Three shapes: a Page ``leadgen`` change, and the WhatsApp Business Account ``messages``
change carrying either an inbound message (``contacts`` + ``messages``) or status updates of
messages the business sent (``statuses``). Timestamps follow Meta: the entry ``time`` and the
leadgen ``created_time`` are integers (epoch seconds), WhatsApp ``timestamp`` values are
strings of epoch seconds.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping
from typing import Any

__all__ = [
    "inbound_message_payload",
    "leadgen_payload",
    "new_wamid",
    "status_error",
    "status_payload",
]


def new_wamid() -> str:
    """A fresh WhatsApp message id (``wamid.`` and an opaque base64 string, like Meta's)."""
    raw = b"\x15\x02\x00\x11\x18\x12" + secrets.token_bytes(18)
    return "wamid." + base64.b64encode(raw).decode("ascii")


def leadgen_payload(
    *,
    page_id: str,
    leadgen_id: str,
    form_id: str,
    ad_id: str | None,
    created_time: int,
    time: int,
) -> dict[str, Any]:
    """A Page webhook announcing one new lead (an organic lead has no ad/adgroup id)."""
    value: dict[str, Any] = {
        "leadgen_id": leadgen_id,
        "page_id": page_id,
        "form_id": form_id,
        "created_time": created_time,
    }
    if ad_id is not None:
        value["ad_id"] = ad_id
        value["adgroup_id"] = ad_id  # Graph's old name for an ad, still sent beside it
    return {
        "object": "page",
        "entry": [{"id": page_id, "time": time, "changes": [{"field": "leadgen", "value": value}]}],
    }


def _waba_change(waba_id: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": waba_id, "changes": [{"value": value, "field": "messages"}]}],
    }


def _metadata(display_phone_number: str, phone_number_id: str) -> dict[str, str]:
    return {"display_phone_number": display_phone_number, "phone_number_id": phone_number_id}


def inbound_message_payload(
    *,
    waba_id: str,
    phone_number_id: str,
    display_phone_number: str,
    from_wa_id: str,
    profile_name: str,
    message_id: str,
    timestamp: int,
    text: str,
) -> dict[str, Any]:
    """A text message a WhatsApp user sent to the business number."""
    return _waba_change(
        waba_id,
        {
            "messaging_product": "whatsapp",
            "metadata": _metadata(display_phone_number, phone_number_id),
            "contacts": [{"profile": {"name": profile_name}, "wa_id": from_wa_id}],
            "messages": [
                {
                    "from": from_wa_id,
                    "id": message_id,
                    "timestamp": str(timestamp),
                    "type": "text",
                    "text": {"body": text},
                }
            ],
        },
    )


def status_error(code: int, title: str, details: str) -> dict[str, Any]:
    """One entry of a failed status's ``errors``: ``code``, ``title``, ``message``,
    ``error_data.details`` (the v16.0+ shape) and ``href`` to Meta's error-code page."""
    return {
        "code": code,
        "title": title,
        "message": title,
        "error_data": {"details": details},
        "href": "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/",
    }


def status_payload(
    *,
    waba_id: str,
    phone_number_id: str,
    display_phone_number: str,
    message_id: str,
    status: str,
    recipient_id: str,
    timestamp: int,
    conversation: Mapping[str, Any] | None = None,
    pricing: Mapping[str, Any] | None = None,
    errors: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One status update of a message the business sent (``sent``, ``delivered``, ``read``
    or ``failed``)."""
    entry: dict[str, Any] = {
        "id": message_id,
        "status": status,
        "timestamp": str(timestamp),
        "recipient_id": recipient_id,
    }
    if conversation is not None:
        entry["conversation"] = dict(conversation)
    if pricing is not None:
        entry["pricing"] = dict(pricing)
    if errors:
        entry["errors"] = [dict(error) for error in errors]
    return _waba_change(
        waba_id,
        {
            "messaging_product": "whatsapp",
            "metadata": _metadata(display_phone_number, phone_number_id),
            "statuses": [entry],
        },
    )
