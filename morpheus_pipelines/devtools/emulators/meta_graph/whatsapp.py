"""WhatsApp Cloud API: business phone numbers, templates, the customer service window and
``POST /{version}/{phone_number_id}/messages``.

The window is Meta's: a free-form (non-template) message may go to a user only within 24 hours
of that user's last message to the same business number. The emulator knows the last inbound
time per ``(phone_number_id, wa_id)`` from :meth:`~WhatsAppEndpoints.record_inbound` and from
the inbound messages it delivers, measured against its injectable clock.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .._messages import Request, Response
from .errors import cloud_error, nonexisting_object
from .payloads import new_wamid

__all__ = [
    "MESSAGE_TYPES",
    "REENGAGEMENT_DETAILS",
    "SERVICE_WINDOW",
    "SentMessage",
    "WhatsAppEndpoints",
    "as_utc",
]

SERVICE_WINDOW = timedelta(hours=24)
REENGAGEMENT_DETAILS = (
    "Message failed to send because more than 24 hours have passed since the customer last "
    "replied to this number."
)
# The message types the Cloud API takes; only text and template are modelled in detail, the
# others need their object (``{"image": {...}}``) and count as free-form for the window.
MESSAGE_TYPES = (
    "audio",
    "contacts",
    "document",
    "image",
    "interactive",
    "location",
    "reaction",
    "sticker",
    "template",
    "text",
    "video",
)
_NOT_DIGITS = re.compile(r"\D")


def as_utc(moment: datetime) -> datetime:
    """``moment`` as an aware UTC datetime (a naive one is taken to be UTC already)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


@dataclass(frozen=True)
class SentMessage:
    """One send the emulator accepted (it answered a ``wamid``).

    ``request`` is the JSON body as posted; ``text`` is ``text.body`` for a text message,
    ``template`` is ``(name, language code)`` for a template. ``failed_code`` is set when the
    send was accepted but fails afterwards (``reengagement_failure="webhook"``: 131047
    reported by a ``failed`` status instead of the response).
    """

    wamid: str
    phone_number_id: str
    to: str
    wa_id: str
    type: str
    request: dict[str, Any]
    sent_at: datetime
    text: str | None = None
    template: tuple[str, str] | None = None
    category: str = "service"  # the pricing category: service, or the template's category
    failed_code: int | None = None


class WhatsAppEndpoints:
    """Numbers, templates, windows and the send endpoint (a mixin of the emulator)."""

    _lock: threading.RLock
    _now: Callable[[], datetime]
    _phone_numbers: dict[str, str]
    _templates: dict[tuple[str, str], str]
    _inbound: dict[tuple[str, str], datetime]
    _sent: list[SentMessage]
    reengagement_failure: str

    # -- state -------------------------------------------------------------------------------

    def add_phone_number(self, phone_number_id: str, display_phone_number: str) -> None:
        """Register a business phone number messages can be sent from."""
        with self._lock:
            self._phone_numbers[str(phone_number_id)] = str(display_phone_number)

    def phone_numbers(self) -> dict[str, str]:
        """``phone_number_id -> display_phone_number``."""
        with self._lock:
            return dict(self._phone_numbers)

    def add_template(self, name: str, language: str, *, category: str = "UTILITY") -> None:
        """Register an approved template in one language (``category``: UTILITY, MARKETING or
        AUTHENTICATION; it becomes the status webhooks' pricing category)."""
        with self._lock:
            self._templates[(name, language)] = category.upper()

    def remove_template(self, name: str, language: str) -> None:
        """Withdraw a template (sending it is then 132001)."""
        with self._lock:
            self._templates.pop((name, language), None)

    def templates(self) -> list[tuple[str, str, str]]:
        """``(name, language, category)`` of every registered template."""
        with self._lock:
            return [(name, lang, cat) for (name, lang), cat in self._templates.items()]

    def record_inbound(
        self, phone_number_id: str, wa_id: str, at: datetime | None = None
    ) -> datetime:
        """Note that ``wa_id`` wrote to ``phone_number_id`` at ``at`` (default: the emulator's
        now), opening the 24-hour window from then; an earlier time than the one known does
        not move it back. Returns the last inbound time now in force."""
        moment = as_utc(at) if at is not None else self._now()
        key = (str(phone_number_id), _digits(wa_id))
        with self._lock:
            known = self._inbound.get(key)
            if known is None or moment > known:
                self._inbound[key] = moment
            return self._inbound[key]

    def forget_inbound(self, phone_number_id: str, wa_id: str) -> None:
        """Forget the user's last message: the window is closed."""
        with self._lock:
            self._inbound.pop((str(phone_number_id), _digits(wa_id)), None)

    def last_inbound(self, phone_number_id: str, wa_id: str) -> datetime | None:
        """When ``wa_id`` last wrote to ``phone_number_id``, as far as the emulator knows."""
        with self._lock:
            return self._inbound.get((str(phone_number_id), _digits(wa_id)))

    def window_open(self, phone_number_id: str, wa_id: str) -> bool:
        """Whether a free-form message to ``wa_id`` would be accepted now."""
        last = self.last_inbound(phone_number_id, wa_id)
        return last is not None and self._now() - last < SERVICE_WINDOW

    def sent_messages(
        self, *, to: str | None = None, phone_number_id: str | None = None
    ) -> list[SentMessage]:
        """Every accepted send, oldest first, optionally to one recipient (any spelling of its
        number) or from one business number."""
        wa_id = _digits(to) if to is not None else None
        with self._lock:
            return [
                sent
                for sent in self._sent
                if (wa_id is None or sent.wa_id == wa_id)
                and (phone_number_id is None or sent.phone_number_id == phone_number_id)
            ]

    def sent_message(self, wamid: str) -> SentMessage | None:
        """The accepted send with this id, or None."""
        with self._lock:
            return next((sent for sent in self._sent if sent.wamid == wamid), None)

    # -- the endpoint ------------------------------------------------------------------------

    def _handle_messages(self, request: Request) -> Response:
        phone_number_id = request.params["object_id"]
        with self._lock:
            known = phone_number_id in self._phone_numbers
        if not known:
            return nonexisting_object(phone_number_id, "POST")
        try:
            body = request.json
        except ValueError:
            body = None
        if not isinstance(body, dict):
            body = {}  # Graph reads what it can; a body it cannot read lacks every parameter
        problem, to, message_type = _check_envelope(body)
        if problem is not None:
            return problem
        wa_id = _digits(to)
        template: tuple[str, str] | None = None
        text: str | None = None
        category = "service"
        failed_code = None
        if message_type == "template":
            template, problem = _check_template(body.get("template"))
            if problem is not None:
                return problem
            with self._lock:
                found = self._templates.get(template)
            if found is None:
                name, language = template
                return cloud_error(132001, f"template name ({name}) does not exist in {language}")
            category = found.lower()
        else:
            text, problem = _check_content(body, message_type)
            if problem is not None:
                return problem
            if not self.window_open(phone_number_id, wa_id):
                if self.reengagement_failure == "response":
                    return cloud_error(131047, REENGAGEMENT_DETAILS)
                failed_code = 131047
        sent = SentMessage(
            wamid=new_wamid(),
            phone_number_id=phone_number_id,
            to=to,
            wa_id=wa_id,
            type=message_type,
            request=copy.deepcopy(body),
            sent_at=self._now(),
            text=text,
            template=template,
            category=category,
            failed_code=failed_code,
        )
        with self._lock:
            self._sent.append(sent)
        self._after_send(sent)
        message: dict[str, Any] = {"id": sent.wamid}
        if message_type == "template":
            message["message_status"] = "accepted"
        return Response(
            200,
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": to, "wa_id": wa_id}],
                "messages": [message],
            },
        )

    def _after_send(self, sent: SentMessage) -> None:
        """What follows an accepted send (status webhooks); the webhook mixin fills it in."""


def _digits(number: str) -> str:
    return _NOT_DIGITS.sub("", str(number))


def _check_envelope(body: dict[str, Any]) -> tuple[Response | None, str, str]:
    product = body.get("messaging_product")
    if product is None:
        return cloud_error(100, "The parameter messaging_product is required."), "", ""
    if product != "whatsapp":
        details = f'Param messaging_product must be one of {{WHATSAPP}} - got "{product}".'
        return cloud_error(100, details), "", ""
    to = body.get("to")
    if not isinstance(to, str) or not to.strip():
        return cloud_error(100, "The parameter to is required."), "", ""
    if not _digits(to):
        return cloud_error(100, f'Param to must be a phone number - got "{to}".'), "", ""
    message_type = body.get("type", "text")  # the Cloud API's default type is text
    if message_type not in MESSAGE_TYPES:
        choices = ", ".join(t.upper() for t in MESSAGE_TYPES)
        details = f'Param type must be one of {{{choices}}} - got "{message_type}".'
        return cloud_error(100, details), to, ""
    return None, to, message_type


def _check_template(raw: Any) -> tuple[tuple[str, str], Response | None]:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        return ("", ""), cloud_error(131008, "The parameter template['name'] is required.")
    language = raw.get("language")
    code = language.get("code") if isinstance(language, dict) else None
    if not isinstance(code, str) or not code:
        details = "The parameter template['language']['code'] is required."
        return ("", ""), cloud_error(131008, details)
    return (raw["name"], code), None


def _check_content(body: dict[str, Any], message_type: str) -> tuple[str | None, Response | None]:
    content = body.get(message_type)
    if message_type == "text":
        text = content.get("body") if isinstance(content, dict) else None
        if not isinstance(text, str) or not text:
            return None, cloud_error(131008, "The parameter text['body'] is required.")
        return text, None
    if not isinstance(content, dict | list):
        return None, cloud_error(131008, f"The parameter {message_type} is required.")
    return None, None
