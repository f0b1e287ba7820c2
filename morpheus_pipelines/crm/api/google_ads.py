"""``POST /v1/webhooks/google-ads``: Google Ads lead-form deliveries (docs/senders.md,
"Google Ads").

No API key: the body's ``google_key`` is the advertiser's secret, and its SHA-256 picks the
subscription (one indexed lookup); an unknown or missing key is a 401 before anything else is
read or stored, and counts against the address's budget of failed authentications, as a wrong
API key does. Then the lead is made as
``POST /v1/leads`` makes one, owner included, before the 200 (source ``google_ads``, the
``lead_id`` as its submission id); a test lead (``is_test``, Google's "send test data") is
stored closed and reaches no rep. A contact answer that does not read as an email or a phone
is kept in the lead's payload, not a reason to refuse the lead.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import Answer, Intake, Refused, intake_of, invalid
from morpheus_pipelines.crm.api.problems import problem
from morpheus_pipelines.crm.api.sender_leads import sender_contact, sender_lead, sender_test_lead
from morpheus_pipelines.crm.rules.google_ads import (
    GOOGLE_ADS_SOURCE,
    GoogleAdsLead,
    InvalidLeadForm,
    google_key_of,
    parse_lead_form,
)
from morpheus_pipelines.crm.rules.subscription_settings import google_ads_key_hash
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.observability.events import log_event

PATH = "/v1/webhooks/google-ads"


async def post_google_ads_lead(request: Request) -> Response:
    intake = intake_of(request)
    intake.admit_address(request)  # the key in the body is this endpoint's authentication
    body = await intake.read_bytes(request)
    key = google_key_of(body)
    subscription_id = None
    if key is not None and key == key.strip():
        subscription_id = await intake.in_transaction(
            lambda session: CrmStore.subscriptions.by_google_ads_key_hash(
                session, google_ads_key_hash(key)
            )
        )
    if subscription_id is None:
        log_event("google_ads_lead_refused", level=logging.WARNING, reason="unknown_google_key")
        raise intake.failed_authentication(
            request, problem(401, "unknown_google_key", "no subscription has this google_key")
        )
    try:
        lead = parse_lead_form(body)
    except InvalidLeadForm as exc:
        raise Refused(invalid(exc.field, str(exc))) from None
    now = intake.now()
    answer: Answer = await intake.in_transaction(
        lambda session: _store(session, intake, subscription_id, lead, now)
    )
    log_event(
        "google_ads_lead_received",
        lead_id=answer.body.get("lead_id"),
        is_test=lead.is_test,
        replayed=answer.status == 200,
    )
    return JSONResponse(answer.body, status_code=200)


def _store(
    session: Session,
    intake: Intake,
    subscription_id: uuid.UUID,
    lead: GoogleAdsLead,
    now: datetime,
) -> Answer:
    contact, rejected = sender_contact(
        session,
        subscription_id,
        email=lead.email,
        phone=lead.phone,
        first_name=lead.first_name,
        last_name=lead.last_name,
    )
    payload = lead.payload() | ({"rejected_contact": rejected} if rejected else {})
    if lead.is_test:
        return sender_test_lead(
            session,
            subscription_id,
            source=GOOGLE_ADS_SOURCE,
            submission_id=lead.lead_id,
            contact=contact,
            payload=payload,
            now=now,
        )
    return sender_lead(
        session,
        intake.directory,
        subscription_id,
        source=GOOGLE_ADS_SOURCE,
        submission_id=lead.lead_id,
        contact=contact,
        campaign_ids=lead.campaign_ids(),
        payload=payload,
        now=now,
    )


ROUTES = [Route(PATH, post_google_ads_lead, methods=["POST"])]
