"""``POST /v1/webhooks/hubspot``: HubSpot's webhook deliveries (docs/hubspot-webhooks.md).

No API key: the delivery is HubSpot's when its ``X-HubSpot-Signature-v3`` holds and its
timestamp is recent (:mod:`~morpheus_pipelines.crm.rules.hubspot_webhooks`); otherwise 401 and
nothing is read further or stored. A refused signature counts against the client address's
budget of failed authentications, as a wrong API key does, and an address past it gets 429
before its body is read. The body is read within the size and time limits of every
endpoint, the signature checked over its raw bytes, then the events parsed (422 naming the
field) and, in one transaction, stored once each and the new contact events applied
(:mod:`~morpheus_pipelines.crm.steps.hubspot_webhooks`) before the 200.
"""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import Refused, intake_of, invalid
from morpheus_pipelines.crm.api.problems import problem
from morpheus_pipelines.crm.rules.hubspot_webhooks import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    InvalidDelivery,
    SignatureRefused,
    parse_delivery,
    signed_uri,
    verify_signature,
)
from morpheus_pipelines.crm.steps.hubspot_webhooks import DeliveryOutcome, receive_delivery
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.observability.events import log_event

PATH = "/v1/webhooks/hubspot"


async def post_hubspot_webhook(request: Request) -> Response:
    intake = intake_of(request)
    intake.admit_address(request)  # a signature is this endpoint's authentication
    body = await intake.read_bytes(request)
    settings = intake.settings
    now = intake.now()
    try:
        verify_signature(
            settings.hubspot_client_secret,
            method=request.method,
            uri=signed_uri(
                settings.public_url, request.url.path, request.url.query, str(request.url)
            ),
            body=body,
            signature=request.headers.get(SIGNATURE_HEADER),
            timestamp=request.headers.get(TIMESTAMP_HEADER),
            now=now,
        )
    except SignatureRefused as refused:
        log_event("hubspot_webhook_refused", level=logging.WARNING, reason=refused.reason)
        raise intake.failed_authentication(
            request, problem(401, refused.reason, "the delivery is not HubSpot's, or not recent")
        ) from None
    try:
        events = parse_delivery(body)
    except InvalidDelivery as exc:
        raise Refused(invalid(exc.field, str(exc))) from None
    outcome: DeliveryOutcome = await intake.in_transaction(
        lambda session: receive_delivery(CrmStore(session), events, now=now)
    )
    if outcome.unknown_portal_ids:
        log_event(
            "hubspot_webhook_unknown_portal",
            level=logging.WARNING,
            portal_ids=outcome.unknown_portal_ids,
            events=outcome.unknown_portal_events,
        )
    summary = outcome.summary()
    log_event("hubspot_webhook_received", **summary, actions=dict(outcome.actions))
    return JSONResponse(summary)


ROUTES = [Route(PATH, post_hubspot_webhook, methods=["POST"])]
