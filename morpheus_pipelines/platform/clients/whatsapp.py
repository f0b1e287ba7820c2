"""The WhatsApp Cloud API's send endpoint, ``POST /{version}/{phone-number-id}/messages``
(docs/messages.md).

One request per call and no retry inside the client: whether an attempt may be repeated
depends on whether it could have reached Meta, which only the caller's record can settle
(the Cloud API takes no idempotency key). So the client tells the two failures apart:

* :class:`NotSent` — the request certainly did not leave: the connection was refused or
  could not be opened in time;
* :class:`AnswerLost` — it may have: a read timeout, a connection dropped after the request
  was written, an answer cut short.

Anything Meta answered comes back as an :class:`Answer` (status and parsed body) for the
rules to read (``crm.rules.message_sending.whatsapp_outcome``). The token is handled as every
Graph client handles it (:class:`~.graph_api.GraphApi`), and no message built here quotes the
request: the recipient's number and the text stay out of errors and logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import requests
import urllib3

from morpheus_pipelines.platform.clients.graph_api import (
    DEFAULT_API_VERSION,
    DEFAULT_BASE_URL,
    GraphApi,
)
from morpheus_pipelines.platform.clients.http import retry_after_seconds


@dataclass(frozen=True)
class Answer:
    """What Meta answered: the HTTP status, the parsed JSON (``None`` when not JSON) and the
    ``Retry-After`` it asked for, in seconds."""

    status: int
    body: Any
    retry_after: float | None = None


class NotSent(RuntimeError):
    """The request never reached Meta: trying again cannot send the message twice."""


class AnswerLost(RuntimeError):
    """The request may have reached Meta, but no answer came back."""


def text_message(to: str, body: str) -> dict[str, Any]:
    """A free-form text message, as the Cloud API takes it."""
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "text",
        "text": {"preview_url": False, "body": body},
    }


def template_message(to: str, name: str, language: str) -> dict[str, Any]:
    """An approved template by name and language code (``en_US``), without parameters."""
    return {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "template",
        "template": {"name": name, "language": {"code": language}},
    }


def _never_connected(exc: requests.RequestException) -> bool:
    """Whether a transport failure happened before any byte of the request was written."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    if not isinstance(exc, requests.ConnectionError) or isinstance(exc, requests.ReadTimeout):
        return False
    reason = exc.args[0] if exc.args else None
    if isinstance(reason, urllib3.exceptions.MaxRetryError):
        reason = reason.reason
    return isinstance(reason, urllib3.exceptions.NewConnectionError | ConnectionRefusedError)


class WhatsAppClient(GraphApi):
    """Sends messages from a business phone number through the Cloud API."""

    configured = True

    def __init__(
        self,
        token: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_version: str = DEFAULT_API_VERSION,
        connect_timeout: float = 5.0,
        read_timeout: float = 20.0,
    ) -> None:
        super().__init__(token, base_url=base_url, api_version=api_version)
        self.timeout = (connect_timeout, read_timeout)
        self.requests = 0

    def send(self, phone_number_id: str, message: dict[str, Any]) -> Answer:
        """Post one message (:func:`text_message`, :func:`template_message`) from
        ``phone_number_id``; raises :class:`NotSent` or :class:`AnswerLost`."""
        url = self.url(phone_number_id, "messages")
        self.requests += 1
        try:
            response = self._session.post(url, json=message, timeout=self.timeout)
            try:
                body = response.json()
            except ValueError:
                body = None
        except requests.RequestException as exc:
            if _never_connected(exc):
                problem = f"the Cloud API could not be reached ({type(exc).__name__})"
                raise NotSent(problem) from None
            raise AnswerLost(f"no answer from the Cloud API ({type(exc).__name__})") from None
        wait = retry_after_seconds(response.headers.get("Retry-After"))
        return Answer(response.status_code, body, wait)
