"""``GET`` and ``POST /v1/webhooks/meta``: Meta's verification handshake and its webhook
deliveries — Lead Ads leads of a Facebook page, and the WhatsApp Cloud API's messages and
statuses of a WhatsApp Business number (docs/senders.md, "Meta").

No API key: a delivery is Meta's when its ``X-Hub-Signature-256`` holds over the raw body
(:mod:`~morpheus_pipelines.crm.rules.meta_webhooks`); otherwise 401 and nothing is read
further or stored. Then, each in its own transaction so that one cannot undo another:

* a ``leadgen`` change → a lead with its owner, made as ``POST /v1/leads`` makes one
  (subscription by page id, source ``meta_lead_ads``, the ``leadgen_id`` as its submission
  id), and a retrieval of its answers from the Graph API, done afterwards
  (:mod:`~morpheus_pipelines.crm.steps.lead_contact_retrieval`): the answer to Meta cannot
  wait for another call to Meta;
* a WhatsApp message → an inbound WhatsApp activity on the timeline of the lead with that
  number (a new lead when nobody has it), which opens the 24-hour window;
* a WhatsApp status → the outbound message's status.

The answer is 200 with what was done, once everything is stored: Meta redelivers what was not
answered 200, and every part is idempotent, so a redelivery changes nothing.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import Intake, Refused, intake_of
from morpheus_pipelines.crm.api.problems import problem
from morpheus_pipelines.crm.api.schemas import ContactIn
from morpheus_pipelines.crm.api.sender_leads import sender_contact, sender_lead
from morpheus_pipelines.crm.api.signed_deliveries import read_signed_delivery
from morpheus_pipelines.crm.rules.meta_webhooks import (
    LEAD_ADS_SOURCE,
    SIGNATURE_HEADER,
    InboundWhatsApp,
    LeadgenChange,
    WhatsAppStatus,
    parse_delivery,
    verification_challenge,
    verify_signature,
)
from morpheus_pipelines.crm.steps.whatsapp_webhooks import (
    WHATSAPP_SOURCE,
    inbound_message_lead,
    record_inbound_message,
    record_statuses,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.observability.events import log_event

PATH = "/v1/webhooks/meta"


async def verify_meta_webhook(request: Request) -> Response:
    settings = intake_of(request).settings
    query = request.query_params
    challenge = verification_challenge(
        settings.meta_verify_token,
        query.get("hub.mode"),
        query.get("hub.verify_token"),
        query.get("hub.challenge"),
    )
    if challenge is None:
        log_event("meta_webhook_verification_refused", level=logging.WARNING)
        raise Refused(problem(403, "verification_refused", "not our verify token"))
    return PlainTextResponse(challenge)


async def post_meta_webhook(request: Request) -> Response:
    intake, delivery = await read_signed_delivery(
        request,
        verify=lambda intake, body: verify_signature(
            intake.settings.meta_app_secret, body, request.headers.get(SIGNATURE_HEADER)
        ),
        parse=parse_delivery,
        refused_event="meta_webhook_refused",
        not_ours="the delivery is not signed by our Meta app",
    )
    now = intake.now()
    done: Counter[str] = Counter(delivery.skipped)
    for change in delivery.leadgen:
        done[await _lead(intake, change, now)] += 1
    for message in delivery.messages:
        done[await _message(intake, message, now)] += 1
    if delivery.statuses:
        done.update(await intake.in_transaction(lambda s: _statuses(s, delivery.statuses)))
    summary = dict(sorted(done.items()))
    log_event("meta_webhook_received", **summary)
    return JSONResponse({"received": summary})


async def _lead(intake: Intake, change: LeadgenChange, now: datetime) -> str:
    def work(session: Session) -> str:
        store = CrmStore(session)
        subscription_id = store.subscriptions.by_meta_page_id(session, change.page_id)
        if subscription_id is None:
            log_event("meta_lead_unknown_page", level=logging.WARNING, page_id=change.page_id)
            return "leads_of_unknown_page"
        answer = sender_lead(
            session,
            intake.directory,
            subscription_id,
            source=LEAD_ADS_SOURCE,
            submission_id=change.leadgen_id,
            contact=ContactIn(),
            campaign_ids=change.campaign_ids(),
            payload=change.payload(),
            now=now,
        )
        if answer.status != 201:
            return "leads_replayed"
        store.contact_retrievals.add(
            session,
            uuid.UUID(answer.body["lead_id"]),
            subscription_id,
            provider="meta",
            external_id=change.leadgen_id,
        )
        return "leads_created"

    return await intake.in_transaction(work)


async def _message(intake: Intake, message: InboundWhatsApp, now: datetime) -> str:
    subscription_id, lead_id = await intake.in_transaction(
        lambda session: inbound_message_lead(CrmStore(session), message)
    )
    if subscription_id is None:
        log_event(
            "whatsapp_unknown_number", level=logging.WARNING, number_id=message.phone_number_id
        )
        return "messages_of_unknown_number"
    if lead_id is None:  # a number nobody has yet: the message is a new lead
        lead_id = await intake.in_transaction(
            lambda session: _lead_of_new_number(session, intake, subscription_id, message, now)
        )
    created = await intake.in_transaction(
        lambda session: record_inbound_message(CrmStore(session), subscription_id, lead_id, message)
    )
    return "messages_recorded" if created else "messages_replayed"


def _lead_of_new_number(
    session: Session,
    intake: Intake,
    subscription_id: uuid.UUID,
    message: InboundWhatsApp,
    now: datetime,
) -> uuid.UUID:
    contact, rejected = sender_contact(
        session,
        subscription_id,
        email=None,
        phone=message.from_e164,
        first_name=message.profile_name,
        last_name=None,
    )
    payload: dict[str, Any] = {"whatsapp": {"phone_number_id": message.phone_number_id}}
    if rejected:
        payload["rejected_contact"] = rejected
    answer = sender_lead(
        session,
        intake.directory,
        subscription_id,
        source=WHATSAPP_SOURCE,
        submission_id=message.from_wa_id,
        contact=contact,
        campaign_ids=[],
        payload=payload,
        now=now,
    )
    return uuid.UUID(answer.body["lead_id"])


def _statuses(session: Session, statuses: list[WhatsAppStatus]) -> dict[str, Any]:
    return record_statuses(CrmStore(session), statuses)


ROUTES = [
    Route(PATH, verify_meta_webhook, methods=["GET"]),
    Route(PATH, post_meta_webhook, methods=["POST"]),
]
