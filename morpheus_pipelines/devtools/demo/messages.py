"""The demo's messages leave (docs/messages.md): a WhatsApp nudge rule beside the email one,
the queued WhatsApp messages sent through the Cloud API (Meta's emulator on loopback), and the
delivery statuses Meta posts back arriving at the service's signed webhook. Email waits: the
demo has no mail server (``MORPHEUS_SMTP_URL`` is unset), and says so."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from morpheus_pipelines.crm.models import Lead, OutboundMessage
from morpheus_pipelines.crm.repositories.timeline import AutomationRepository
from morpheus_pipelines.crm.rules.timeline import NudgeRule
from morpheus_pipelines.crm.steps.lead_automations import add_rule
from morpheus_pipelines.crm.steps.message_sending import (
    MessageSenders,
    NotConfigured,
    deliver_messages,
)
from morpheus_pipelines.crm.steps.subscriptions import change_settings, subscription_settings
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from morpheus_pipelines.platform.clients.whatsapp import WhatsAppClient

DEMO_META_TOKEN = "EAAdemo-meta-token"
DEMO_META_APP_SECRET = "demo-meta-app-secret"
DEMO_WHATSAPP_RULE = "demo_quiet_day_whatsapp"
TEMPLATES = ("still_interested", "follow_up_1")
_automations = AutomationRepository()


@contextmanager
def meta_emulator(service_base: str) -> Iterator[MetaGraphEmulator]:
    """Meta's emulator, posting each send's ``sent`` and ``delivered`` statuses back to the
    service, signed with the demo's app secret."""
    emulator = MetaGraphEmulator(
        token=DEMO_META_TOKEN,
        app_secret=DEMO_META_APP_SECRET,
        webhook_url=f"{service_base}/v1/webhooks/meta",
        auto_status=True,
    )
    for template in TEMPLATES:
        emulator.add_template(template, "en_US", category="MARKETING")
    with emulator:
        yield emulator


def add_whatsapp_rule(url: str, subscription_id: uuid.UUID, number_id: str) -> None:
    """A WhatsApp template nudge after a quiet day, sent from the emulator's business number."""
    with get_session(url) as session:
        shown = subscription_settings(session, subscription_id) or {}
        if shown.get("whatsapp_phone_number_id") != number_id:
            change_settings(session, subscription_id, {"--whatsapp-phone-number-id": number_id})
        if _automations.first_by(session, subscriptionId=subscription_id, name=DEMO_WHATSAPP_RULE):
            return
        add_rule(
            session,
            subscription_id,
            name=DEMO_WHATSAPP_RULE,
            rule=NudgeRule("whatsapp", timedelta(hours=24), kind="template"),
            template_name=TEMPLATES[0],
        )


def messages_leave(url: str, emulator: MetaGraphEmulator, lead_ids: dict[str, str]) -> list[str]:
    """Send what is queued, wait for Meta's statuses, and describe each message."""
    client = WhatsAppClient(DEMO_META_TOKEN, base_url=emulator.base_url, read_timeout=10)
    senders = MessageSenders(whatsapp=client, email=NotConfigured("MORPHEUS_SMTP_URL"))
    report = deliver_messages(lambda: get_session(url), senders)
    emulator.wait_idle(timeout=10)  # the statuses' webhooks, posted from its own thread
    by_lead = {lead_id: submission for submission, lead_id in lead_ids.items()}
    with get_session(url) as session:
        rows = session.execute(
            select(OutboundMessage, Lead.id)
            .join(Lead, Lead.id == OutboundMessage.leadId)
            .where(Lead.id.in_([uuid.UUID(i) for i in by_lead]))
            .order_by(OutboundMessage.createdAt)
        ).all()
    lines = ["", "  messages leave (WhatsApp through the Cloud API emulator; statuses by webhook):"]
    for message, lead_id in rows:
        what = message.templateName or "free-form"
        status = message.status
        if message.channel.value == "EMAIL" and status == "queued":
            status = "queued (waits: MORPHEUS_SMTP_URL is not set)"
        elif message.deliveredAt is not None:
            status += f" (sent {message.sentAt:%H:%M:%S}; delivered told by Meta's webhook)"
        lines.append(
            f"    {by_lead[str(lead_id)]:<12} {message.channel.value.lower():<8} "
            f"{what:<17} {status}"
        )
    lines.append(
        f"    sent {sum(report.sent.values())}, failed "
        f"{sum(sum(r.values()) for r in report.failed.values())}, at "
        f"{datetime.now(UTC):%H:%M:%S} UTC"
    )
    return lines
