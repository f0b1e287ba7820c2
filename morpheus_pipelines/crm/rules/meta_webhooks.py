"""Meta's webhook deliveries, as rules (docs/senders.md, "Meta"): the verification handshake,
the ``X-Hub-Signature-256`` signature, and what a delivery holds for us — Lead Ads ``leadgen``
changes of a Facebook page, and the WhatsApp Cloud API's ``messages`` and ``statuses`` of a
WhatsApp Business number. Also a retrieved lead's ``field_data`` read as a contact.

Pure: no HTTP, no database. The endpoint (``crm.api.meta``) hands in the raw body and the
headers' values.

* The verification is a ``GET`` with ``hub.mode=subscribe``, ``hub.verify_token`` (the token
  the app was configured with, ``META_VERIFY_TOKEN``) and ``hub.challenge``, which is answered
  back as the body. The token is compared in constant time.
* A delivery is signed with ``sha256=<hex HMAC-SHA256 of the raw body, keyed by the app
  secret>``, compared in constant time. Meta signs no timestamp: a replayed delivery is not
  refused by its age but made harmless by idempotency (one lead per ``leadgen_id``, one
  activity per WhatsApp message id, statuses that only move forward).
* A delivery that is signed but unreadable in part is read as far as it can be: a change we
  do not understand is counted and skipped, never a reason to lose the rest of the batch.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from morpheus_pipelines.crm.rules.delivery_json import (
    InvalidDelivery,
    SignatureRefused,
    epoch_value,
    list_value,
    mapping_value,
    text_value,
)

SIGNATURE_HEADER = "X-Hub-Signature-256"
_SIGNATURE_PREFIX = "sha256="
LEAD_ADS_SOURCE = "meta_lead_ads"
WHATSAPP_PRODUCT = "whatsapp"
MAX_CHALLENGE_LENGTH = 1_000

# Meta's Lead Ads form fields (their ``name`` in ``field_data``) → our contact's fields. A
# form's custom questions keep their own names and go to the lead's payload.
_EMAIL_FIELDS = ("email", "work_email")
_PHONE_FIELDS = ("phone_number", "work_phone_number", "phone")
_FIRST_NAME_FIELDS = ("first_name",)
_LAST_NAME_FIELDS = ("last_name",)
_FULL_NAME_FIELDS = ("full_name",)


# -- the handshake and the signature ----------------------------------------------------------


def verification_challenge(
    verify_token: str, mode: str | None, token: str | None, challenge: str | None
) -> str | None:
    """The body of the answer to Meta's verification, or ``None`` (403) when the mode is not
    ``subscribe``, the token is not ours (or none is configured) or there is no challenge."""
    if not verify_token or mode != "subscribe" or token is None or not challenge:
        return None
    if len(challenge) > MAX_CHALLENGE_LENGTH:
        return None
    if not hmac.compare_digest(token.encode(), verify_token.encode()):
        return None
    return challenge


def signature(app_secret: str, body: bytes) -> str:
    """What Meta puts in ``X-Hub-Signature-256`` for ``body``."""
    return _SIGNATURE_PREFIX + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(app_secret: str, body: bytes, header: str | None) -> None:
    """Raise :class:`SignatureRefused` unless ``header`` signs ``body`` with ``app_secret``."""
    if not app_secret:
        raise SignatureRefused("meta_webhooks_not_configured")
    if not header:
        raise SignatureRefused("missing_signature")
    if not header.startswith(_SIGNATURE_PREFIX):
        raise SignatureRefused("invalid_signature")
    if not hmac.compare_digest(header.strip().encode(), signature(app_secret, body).encode()):
        raise SignatureRefused("invalid_signature")


# -- what a delivery holds --------------------------------------------------------------------


@dataclass(frozen=True)
class LeadgenChange:
    """A Lead Ads lead submitted on a page's form: the lead's id, not its answers."""

    page_id: str
    leadgen_id: str
    form_id: str | None = None
    ad_id: str | None = None
    adgroup_id: str | None = None
    created_time: int | None = None

    def payload(self) -> dict[str, Any]:
        """What the lead keeps of the change (its ``payload``); the same for every delivery of
        this lead, so a redelivery is recognised as one."""
        return {
            "meta": {
                "page_id": self.page_id,
                "leadgen_id": self.leadgen_id,
                "form_id": self.form_id,
                "ad_id": self.ad_id,
                "adgroup_id": self.adgroup_id,
            }
        }

    def campaign_ids(self) -> list[str]:
        """The ids routing rules may name: the ad and its ad set (Meta's "adgroup")."""
        return [value for value in (self.ad_id, self.adgroup_id) if value]


@dataclass(frozen=True)
class InboundWhatsApp:
    """A message a person sent to a WhatsApp Business number."""

    phone_number_id: str
    from_wa_id: str
    message_id: str
    sent_at: datetime
    kind: str
    text: str | None = None
    profile_name: str | None = None

    @property
    def from_e164(self) -> str:
        """WhatsApp ids are the sender's number in international form without the ``+``."""
        return "+" + self.from_wa_id.lstrip("+")


@dataclass(frozen=True)
class WhatsAppStatus:
    """What became of a message we sent: ``sent``, ``delivered``, ``read`` or ``failed``."""

    phone_number_id: str
    message_id: str
    status: str
    at: datetime
    recipient_id: str | None = None
    error_code: str | None = None
    error_reason: str | None = None


@dataclass
class MetaDelivery:
    leadgen: list[LeadgenChange] = field(default_factory=list)
    messages: list[InboundWhatsApp] = field(default_factory=list)
    statuses: list[WhatsAppStatus] = field(default_factory=list)
    # Changes skipped (another field, or one we could not read), by why: counted, logged.
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


STATUSES = ("sent", "delivered", "read", "failed")


def parse_delivery(body: bytes) -> MetaDelivery:
    """The leads, messages and statuses of a signed delivery. :class:`InvalidDelivery` only
    when the body is not a JSON object with an ``entry`` list; anything inside that cannot be
    read is skipped and counted."""
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise InvalidDelivery("body", "the body is not JSON") from None
    if not isinstance(document, dict):
        raise InvalidDelivery("body", "the body is not a JSON object")
    entries = document.get("entry")
    if not isinstance(entries, list):
        raise InvalidDelivery("entry", "a Meta delivery has an entry list")
    delivery = MetaDelivery()
    for entry in entries:
        changes = entry.get("changes") if isinstance(entry, dict) else None
        if not isinstance(changes, list):
            delivery.skip("entry_without_changes")
            continue
        for change in changes:
            _read_change(delivery, change)
    return delivery


def _read_change(delivery: MetaDelivery, change: Any) -> None:
    if not isinstance(change, dict) or not isinstance(change.get("value"), dict):
        delivery.skip("unreadable_change")
        return
    value = change["value"]
    if change.get("field") == "leadgen":
        lead = _leadgen(value)
        if lead is None:
            delivery.skip("unreadable_leadgen")
        else:
            delivery.leadgen.append(lead)
        return
    if change.get("field") == "messages" and value.get("messaging_product") == WHATSAPP_PRODUCT:
        number_id = text_value(mapping_value(value.get("metadata")).get("phone_number_id"))
        if number_id is None:
            delivery.skip("whatsapp_without_phone_number_id")
            return
        names = _profile_names(value.get("contacts"))
        for message in list_value(value.get("messages")):
            inbound = _inbound(number_id, message, names)
            if inbound is None:
                delivery.skip("unreadable_whatsapp_message")
            else:
                delivery.messages.append(inbound)
        for status in list_value(value.get("statuses")):
            read = _status(number_id, status)
            if read is None:
                delivery.skip("unreadable_whatsapp_status")
            else:
                delivery.statuses.append(read)
        return
    delivery.skip(f"field_{text_value(change.get('field')) or 'missing'}"[:60])


def _leadgen(value: Mapping[str, Any]) -> LeadgenChange | None:
    page_id, leadgen_id = text_value(value.get("page_id")), text_value(value.get("leadgen_id"))
    if page_id is None or leadgen_id is None:
        return None
    created = value.get("created_time")
    return LeadgenChange(
        page_id=page_id,
        leadgen_id=leadgen_id,
        form_id=text_value(value.get("form_id")),
        ad_id=text_value(value.get("ad_id")),
        adgroup_id=text_value(value.get("adgroup_id")),
        created_time=created if isinstance(created, int) else None,
    )


def _inbound(number_id: str, message: Any, names: Mapping[str, str]) -> InboundWhatsApp | None:
    message = mapping_value(message)
    sender, message_id = text_value(message.get("from")), text_value(message.get("id"))
    sent_at = epoch_value(message.get("timestamp"))
    if sender is None or message_id is None or sent_at is None or not sender.isdigit():
        return None
    kind = text_value(message.get("type")) or "unknown"
    body = text_value(mapping_value(message.get("text")).get("body")) if kind == "text" else None
    return InboundWhatsApp(
        phone_number_id=number_id,
        from_wa_id=sender,
        message_id=message_id,
        sent_at=sent_at,
        kind=kind,
        text=body,
        profile_name=names.get(sender),
    )


def _status(number_id: str, status: Any) -> WhatsAppStatus | None:
    status = mapping_value(status)
    message_id, state = text_value(status.get("id")), text_value(status.get("status"))
    at = epoch_value(status.get("timestamp"))
    if message_id is None or state not in STATUSES or at is None:
        return None
    errors = [mapping_value(error) for error in list_value(status.get("errors"))]
    first = errors[0] if errors else {}
    reason = text_value(mapping_value(first.get("error_data")).get("details")) or text_value(
        first.get("message") or first.get("title")
    )
    code = first.get("code")
    return WhatsAppStatus(
        phone_number_id=number_id,
        message_id=message_id,
        status=state,
        at=at,
        recipient_id=text_value(status.get("recipient_id")),
        error_code=None if code is None else str(code),
        error_reason=reason,
    )


def _profile_names(contacts: Any) -> dict[str, str]:
    names: dict[str, str] = {}
    for contact in list_value(contacts):
        wa_id = text_value(mapping_value(contact).get("wa_id"))
        name = text_value(mapping_value(mapping_value(contact).get("profile")).get("name"))
        if wa_id and name:
            names[wa_id] = name
    return names


# -- a retrieved lead's answers ---------------------------------------------------------------


@dataclass(frozen=True)
class LeadAnswers:
    """A Lead Ads lead's ``field_data`` read as our contact, the other answers apart."""

    email: str | None = None
    phone: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    other: dict[str, list[str]] = field(default_factory=dict)


def lead_answers(field_data: Any) -> LeadAnswers:
    """The contact in a lead's ``field_data`` (``[{"name": "email", "values": ["…"]}, …]``);
    a full name alone is split at its first space. Unknown shapes give an empty contact."""
    answers: dict[str, list[str]] = {}
    for item in list_value(field_data):
        name = text_value(mapping_value(item).get("name"))
        values = [
            v.strip() for v in list_value(mapping_value(item).get("values")) if isinstance(v, str)
        ]
        if name:
            answers[name.lower()] = [v for v in values if v]
    first, last = _first(answers, _FIRST_NAME_FIELDS), _first(answers, _LAST_NAME_FIELDS)
    full = _first(answers, _FULL_NAME_FIELDS)
    if full and not (first or last):
        first, _, rest = full.partition(" ")
        last = rest.strip() or None
    known = {*_EMAIL_FIELDS, *_PHONE_FIELDS, *_FIRST_NAME_FIELDS, *_LAST_NAME_FIELDS,
             *_FULL_NAME_FIELDS}  # fmt: skip
    return LeadAnswers(
        email=_first(answers, _EMAIL_FIELDS),
        phone=_first(answers, _PHONE_FIELDS),
        first_name=first,
        last_name=last,
        other={name: values for name, values in answers.items() if name not in known},
    )


def _first(answers: Mapping[str, Sequence[str]], names: Iterable[str]) -> str | None:
    for name in names:
        if answers.get(name):
            return answers[name][0]
    return None
