"""``POST /v1/messages``: an outbound message queued for a lead, a free-form WhatsApp message
only inside the window the lead's last message opened, an email never to an address whose
newsletter opt-out is set, and never twice for one ``Idempotency-Key`` (required)
(docs/leads.md, "The timeline")."""

from __future__ import annotations

import logging
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import (
    FORBIDDEN,
    Answer,
    intake_of,
    parsed,
    required_idempotency_header,
    respond,
)
from morpheus_pipelines.crm.api.leads import lead_is_callers
from morpheus_pipelines.crm.api.problems import problem
from morpheus_pipelines.crm.api.schemas import MessageIn
from morpheus_pipelines.crm.models import OutboundMessage
from morpheus_pipelines.crm.repositories.timeline import (
    OutboundMessageRepository,
    TimelineRepository,
)
from morpheus_pipelines.crm.rules.lead_intake import request_fingerprint
from morpheus_pipelines.crm.rules.lead_status import MessageStatus
from morpheus_pipelines.crm.rules.timeline import InvalidActivity, whatsapp_window
from morpheus_pipelines.platform.observability.events import log_event

_timeline = TimelineRepository()
_messages = OutboundMessageRepository()


async def post_message(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    key = required_idempotency_header(request)
    raw = await intake.read_json(request)
    message = parsed(MessageIn, raw)
    now = intake.now()
    answer = await intake.in_transaction(
        lambda session: queue_message(
            session, message, raw, subscription_id, now, idempotency_key=key
        )
    )
    if answer.status == 422 and answer.body["error"] == "whatsapp_window_closed":
        log_event(
            "whatsapp_free_form_refused",
            level=logging.WARNING,
            lead_id=str(message.lead_id),
            closed_at=answer.body["closed_at"],
        )
    if answer.status == 422 and answer.body["error"] == "opted_out":
        log_event("email_to_opted_out_refused", lead_id=str(message.lead_id))
    return respond(answer)


ROUTES = [Route("/v1/messages", post_message, methods=["POST"])]


def queue_message(
    session: Session,
    message: MessageIn,
    raw_body: dict[str, Any],
    subscription_id: uuid.UUID,
    now: datetime,
    *,
    idempotency_key: str,
) -> Answer:
    """``202`` queued (or, for a repeated ``Idempotency-Key``, the original answer); ``422
    whatsapp_window_closed`` or ``422 opted_out`` with nothing queued; ``403`` a lead that is
    not the caller's."""
    if message.kind == "template" and message.template_name is None:
        raise InvalidActivity("template_name", "a template message needs template_name")
    if message.kind == "free_form" and message.body is None:
        raise InvalidActivity("body", "a free-form message needs body")
    if not lead_is_callers(session, message.lead_id, subscription_id):
        return FORBIDDEN
    fingerprint = request_fingerprint(raw_body)
    message_id = _messages.enqueue(
        session,
        {
            "subscriptionId": subscription_id,
            "leadId": message.lead_id,
            "channel": message.channel.upper(),
            "kind": message.kind,
            "templateName": message.template_name,
            "body": message.body,
            "idempotencyKey": idempotency_key,
            "requestFingerprint": fingerprint,
        },
        now=now,
    )
    if message_id is not None:
        return Answer(202, {"message_id": str(message_id), "status": MessageStatus.QUEUED.value})
    earlier = _messages.get_by_key(session, subscription_id, idempotency_key)
    if earlier is not None:
        return _replay(earlier, fingerprint)
    if message.channel == "email":  # the window is WhatsApp's: only the opt-out refuses email
        return OPTED_OUT
    return _window_closed(session, message.lead_id, now)


OPTED_OUT = Answer(
    422,
    problem(
        422,
        "opted_out",
        "the lead's email address has opted out of the newsletter; nothing was queued",
    ),
)


def _replay(earlier: OutboundMessage, fingerprint: str) -> Answer:
    """The answer to a repeated ``Idempotency-Key``: the original, or a refusal when the body
    differs."""
    if earlier.requestFingerprint != fingerprint:
        return Answer(
            422,
            problem(
                422,
                "idempotency_key_reused",
                "this idempotency key was used for a different message",
            ),
        )
    return Answer(
        202,
        {"message_id": str(earlier.id), "status": earlier.status},
        {"Idempotent-Replayed": "true"},
    )


def _window_closed(session: Session, lead_id: uuid.UUID, now: datetime) -> Answer:
    """The refusal of a free-form message the window does not allow (nothing was queued)."""
    window = whatsapp_window(_timeline.last_inbound_whatsapp(session, lead_id, at=now), now)
    return Answer(
        422,
        problem(
            422,
            "whatsapp_window_closed",
            "a free-form WhatsApp message needs a message from the lead in the "
            "last 24 hours; send an approved template instead",
            closed_at=window.closes_at.isoformat() if window.closes_at else None,
        ),
    )
