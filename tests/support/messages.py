"""Messages to send: a subscription with a WhatsApp number, leads with a timeline, messages
queued the way ``POST /v1/messages`` queues them; a real SMTP server (aiosmtpd) on 127.0.0.1
that records what it accepted and answers what a test tells it to."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from email import message_from_bytes
from email.message import Message
from functools import partial
from typing import Any

from aiosmtpd.controller import Controller
from sqlalchemy import select

from morpheus_pipelines.crm.models import (
    Activity,
    Lead,
    OutboundMessage,
    Subscription,
    TargetEmails,
)
from morpheus_pipelines.crm.repositories.timeline import (
    OutboundMessageRepository,
    TimelineRepository,
)
from morpheus_pipelines.crm.steps.message_sending import (
    DeliveryReport,
    MessageSenders,
    NotConfigured,
    deliver_messages,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.platform.clients.smtp import SmtpSender, SmtpServer
from morpheus_pipelines.platform.clients.whatsapp import WhatsAppClient

SENDER_NUMBER = "100000000000101"  # the emulator's default business number
FROM = "Acme Sales <sales@acme.example>"
META_TOKEN = "EAAG-meta-sending-test-token"
PHONE = "+6591234567"

_messages = OutboundMessageRepository()
_timeline = TimelineRepository()


@dataclass
class Messaging:
    """One subscription's leads and messages, written straight to the warehouse."""

    url: str
    subscription_id: uuid.UUID = field(default_factory=uuid.uuid4)
    sender_number: str | None = SENDER_NUMBER

    def __post_init__(self) -> None:
        with get_session(self.url) as session:
            session.add(
                Subscription(
                    id=self.subscription_id,
                    name="Messaging",
                    whatsappPhoneNumberId=self.sender_number,
                )
            )

    def lead(self, *, email: str | None = None, phone: str | None = None) -> uuid.UUID:
        lead_id = uuid.uuid4()
        with get_session(self.url) as session:
            session.add(
                Lead(
                    id=lead_id,
                    subscriptionId=self.subscription_id,
                    idempotencyKey=f"web:{lead_id}",
                    requestFingerprint="-",
                    source="web",
                    sourceSubmissionId=str(lead_id),
                    ownerHubspotOwnerId="101",
                    email=email,
                    phone=phone,
                    response={},
                )
            )
        return lead_id

    def inbound_whatsapp(self, lead_id: uuid.UUID, at: datetime) -> None:
        """The lead wrote to us on WhatsApp at ``at``: the window opens."""
        with get_session(self.url) as session:
            _timeline.record(
                session,
                {
                    "subscriptionId": self.subscription_id,
                    "externalId": f"wamid.in.{uuid.uuid4().hex}",
                    "type": "WHATSAPP",
                    "direction": "inbound",
                    "leadId": lead_id,
                    "occurredAt": at,
                },
            )

    def opt_out(self, email: str) -> None:
        with get_session(self.url) as session:
            session.add(
                TargetEmails(
                    subscriptionId=self.subscription_id, email=email, newsletterOptedOut=True
                )
            )

    def queue(
        self,
        lead_id: uuid.UUID,
        channel: str,
        *,
        at: datetime,
        body: str | None = None,
        template: str | None = None,
    ) -> uuid.UUID:
        """Queue as ``POST /v1/messages`` does (the window and opt-out checked at ``at``)."""
        with get_session(self.url) as session:
            message_id = _messages.enqueue(
                session,
                {
                    "subscriptionId": self.subscription_id,
                    "leadId": lead_id,
                    "channel": channel.upper(),
                    "kind": "template" if template else "free_form",
                    "templateName": template,
                    "body": body,
                    "idempotencyKey": uuid.uuid4().hex,
                },
                now=at,
            )
        assert message_id is not None, "the enqueue refused the message"
        return message_id

    def message(self, message_id: uuid.UUID) -> OutboundMessage:
        with get_session(self.url) as session:
            row = session.get(OutboundMessage, message_id)
            assert row is not None
            session.expunge(row)
            return row

    def outbound_activities(self, lead_id: uuid.UUID) -> list[Activity]:
        with get_session(self.url) as session:
            rows = list(
                session.scalars(
                    select(Activity).where(
                        Activity.leadId == lead_id, Activity.direction == "outbound"
                    )
                )
            )
            session.expunge_all()
            return rows


# -- a real SMTP server ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Mailbox:
    """aiosmtpd's handler: records each accepted mail; ``answers`` lets a test refuse a
    recipient (``rcpt``) or the data (``data``) with an SMTP reply, or (``lose_answer``) take
    the mail and drop the connection before answering."""

    def __init__(self) -> None:
        self.accepted: list[Message] = []
        self.rcpt_answers: list[str] = []
        self.data_answers: list[str] = []
        self.lose_answers = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:
        if self.rcpt_answers:
            return self.rcpt_answers.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        if self.data_answers:
            return self.data_answers.pop(0)
        self.accepted.append(message_from_bytes(envelope.content))
        if self.lose_answers:
            self.lose_answers -= 1
            server.transport.abort()  # queued, but the client never hears so
            await asyncio.sleep(0)
        return "250 Message accepted for delivery"

    def message_ids(self) -> list[str]:
        return [mail["Message-ID"] for mail in self.accepted]


class SmtpTestServer:
    """An aiosmtpd server on 127.0.0.1; ``stop()`` and ``start()`` take it down and up on the
    same port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.mailbox = Mailbox()
        self._controller: Controller | None = None

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._controller = Controller(self.mailbox, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None


def email_senders(server: SmtpTestServer, *, timeout: float = 5.0) -> MessageSenders:
    return MessageSenders(
        whatsapp=NotConfigured("META_ACCESS_TOKEN"),
        email=SmtpSender(SmtpServer.from_url(server.url), FROM, timeout=timeout),
    )


def whatsapp_senders(base_url: str, *, read_timeout: float = 5.0) -> MessageSenders:
    client = WhatsAppClient(
        META_TOKEN, base_url=base_url, api_version="v21.0", read_timeout=read_timeout
    )
    return MessageSenders(whatsapp=client, email=NotConfigured("MORPHEUS_SMTP_URL"))


def drain(
    url: str, senders: MessageSenders, clock: Callable[[], datetime] | datetime, **kwargs: Any
) -> DeliveryReport:
    """One drain at the clock's time (a moved clock's ``advance(...)`` may be passed: the
    time it returns)."""
    now = clock if callable(clock) else (lambda: clock)
    return deliver_messages(partial(get_session, url), senders, now=now, **kwargs)
