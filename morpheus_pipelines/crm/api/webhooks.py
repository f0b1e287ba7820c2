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

from morpheus_pipelines.crm.api.dependencies import Intake
from morpheus_pipelines.crm.api.signed_deliveries import read_signed_delivery
from morpheus_pipelines.crm.rules.hubspot_webhooks import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    parse_delivery,
    signed_uri,
    verify_signature,
)
from morpheus_pipelines.crm.steps.hubspot_webhooks import DeliveryOutcome, receive_delivery
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.platform.observability.events import log_event

PATH = "/v1/webhooks/hubspot"


def _verify(request: Request, intake: Intake, body: bytes) -> None:
    settings = intake.settings
    verify_signature(
        settings.hubspot_client_secret,
        method=request.method,
        uri=signed_uri(settings.public_url, request.url.path, request.url.query, str(request.url)),
        body=body,
        signature=request.headers.get(SIGNATURE_HEADER),
        timestamp=request.headers.get(TIMESTAMP_HEADER),
        now=intake.now(),
    )


async def post_hubspot_webhook(request: Request) -> Response:
    intake, events = await read_signed_delivery(
        request,
        verify=lambda intake, body: _verify(request, intake, body),
        parse=parse_delivery,
        refused_event="hubspot_webhook_refused",
        not_ours="the delivery is not HubSpot's, or not recent",
    )
    now = intake.now()
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
