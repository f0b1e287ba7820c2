"""``POST /v1/leads`` and ``GET /v1/leads/{lead_id}``: a lead and its owner in one
transaction (docs/leads.md, "POST /v1/leads").

1. resolve the routing pool from the source and the campaign ids (most specific rule wins,
   else the default pool);
2. charge the least-loaded assignable member of the pool (one ``UPDATE``); when nobody is
   assignable, the owner ladder: the pool's fallback rep, the subscription's, else the lead
   waits without an owner (never the AI dialer's owner);
3. insert the lead with its owner and its answer, ``ON CONFLICT DO NOTHING`` on the
   idempotency key; a conflict rolls the charge back and replays the stored answer (or refuses
   a different body under the same key);
   — in the same statement, the ``FORM`` activity on the lead's timeline; commit, then
   answer.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api.dependencies import (
    FORBIDDEN,
    Answer,
    idempotency_header,
    intake_of,
    lead_id_of,
    parsed,
    respond,
)
from morpheus_pipelines.crm.api.directory import OwnerDirectory
from morpheus_pipelines.crm.api.schemas import LeadIn
from morpheus_pipelines.crm.repositories.leads import Candidate, LeadRepository
from morpheus_pipelines.crm.rules.lead_intake import (
    PoolRule,
    choose_pool,
    idempotency_key,
    normalise_email,
    normalise_phone,
    request_fingerprint,
)
from morpheus_pipelines.crm.rules.lead_status import OwnerState
from morpheus_pipelines.crm.rules.timeline import FORM_EXTERNAL_ID_PREFIX
from morpheus_pipelines.platform.observability.events import log_event

_leads = LeadRepository()


async def post_lead(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    header = idempotency_header(request)
    raw = await intake.read_json(request)
    lead = parsed(LeadIn, raw)
    if lead.subscription_id != subscription_id:
        return respond(FORBIDDEN)
    now = intake.now()
    return respond(
        await intake.in_transaction(
            lambda session: create_lead(
                session, intake.directory, lead, raw, idempotency_header=header, now=now
            )
        )
    )


async def get_lead(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    lead_id = lead_id_of(request)
    found = await intake.in_transaction(lambda session: lead_view(session, lead_id))
    if found is None or found[0] != subscription_id:
        return respond(FORBIDDEN)
    return JSONResponse(found[1])


ROUTES = [
    Route("/v1/leads", post_lead, methods=["POST"]),
    Route("/v1/leads/{lead_id}", get_lead, methods=["GET"]),
]


def create_lead(
    session: Session,
    directory: OwnerDirectory,
    lead: LeadIn,
    raw_body: dict[str, Any],
    *,
    idempotency_header: str | None = None,
    now: datetime | None = None,
) -> Answer:
    """Create the lead and its owner (201), or replay the answer of an earlier delivery (200)
    or refuse a different body under its key (422). The caller's transaction commits the lead,
    the owner's load and the activity together. Raises
    :class:`~morpheus_pipelines.crm.rules.lead_intake.InvalidContact` for an unusable email or
    phone (before anything is written)."""
    email = normalise_email(lead.contact.email)
    phone = normalise_phone(lead.contact.phone)
    key = idempotency_key(lead.source, lead.source_submission_id, idempotency_header)
    fingerprint = request_fingerprint(raw_body)
    subscription_id = lead.subscription_id

    routing = directory.routing(session, subscription_id)
    pool_id, rule_id = choose_pool(
        [PoolRule(*rule) for rule in routing.rules],
        lead.source,
        lead.campaign_ids,
        routing.default_pool,
    )
    pool_name = routing.pool_names.get(pool_id, "default")
    created_at = now or datetime.now(UTC)
    row = _lead_row(lead, key, fingerprint, email, phone, pool_id, rule_id, created_at)
    activity = {
        "activity_external_id": f"{FORM_EXTERNAL_ID_PREFIX}{key}",
        "activity_metadata": {"source": lead.source, "campaign_ids": list(lead.campaign_ids)},
    }
    candidates = directory.candidates(session, subscription_id, pool_id)
    owner, state, stored = _store(session, row, candidates, pool_id, pool_name, activity)
    if stored is None:
        session.rollback()  # the owner's load charge belongs to the first delivery only
        return _replay(session, subscription_id, key, fingerprint)

    log_event(
        "lead_created",
        level=logging.INFO if state is OwnerState.ASSIGNED else logging.WARNING,
        lead_id=str(row["id"]),
        subscription_id=str(subscription_id),
        source=lead.source,
        pool=pool_name,
        hubspot_owner_id=None if owner is None else owner.hubspot_owner_id,
        owner_state=state.value,
        contact_email=email,
        has_phone=phone is not None,
    )
    return Answer(201, dict(stored))


def _lead_row(
    lead: LeadIn,
    key: str,
    fingerprint: str,
    email: str | None,
    phone: str | None,
    pool_id: int | None,
    rule_id: int | None,
    created_at: datetime,
) -> dict[str, Any]:
    """The new lead's columns, without its owner."""
    return {
        "id": uuid.uuid4(),
        "subscriptionId": lead.subscription_id,
        "idempotencyKey": key,
        "requestFingerprint": fingerprint,
        "source": lead.source,
        "sourceSubmissionId": lead.source_submission_id,
        "campaignIds": list(lead.campaign_ids),
        "email": email,
        "phone": phone,
        "firstName": lead.contact.first_name,
        "lastName": lead.contact.last_name,
        "payload": lead.payload,
        "poolId": pool_id,
        "poolRuleId": rule_id,
        "createdAt": created_at,
    }


def _store(
    session: Session,
    row: dict[str, Any],
    candidates: Sequence[Candidate],
    pool_id: int | None,
    pool_name: str,
    activity: Mapping[str, Any],
) -> tuple[Candidate | None, OwnerState, Mapping[str, Any] | None]:
    """Charge the owner and insert the lead: ``(owner, owner state, the stored answer)``, the
    owner ``None`` while the lead waits, the answer ``None`` when an earlier delivery holds
    the key."""
    if candidates:  # the usual case: owner, lead and activity in one round trip
        owner, stored = _leads.claim_and_insert(
            session, row, candidates, pool_name=pool_name, **activity
        )
        if owner is not None:
            return owner, OwnerState.ASSIGNED, stored
    # Every candidate busy (wait for one) or none at all: the rest of the ladder.
    owner, state = _leads.ladder_owner(session, row["subscriptionId"], candidates, pool_id)
    answer = {
        "lead_id": str(row["id"]),
        "owner": None
        if owner is None
        else {"sales_rep_id": owner.sales_rep_id, "hubspot_owner_id": owner.hubspot_owner_id},
        "pool": pool_name,
        "owner_is_fallback": state is not OwnerState.ASSIGNED,
        "owner_state": state.value,
        "created_at": row["createdAt"].isoformat(),
    }
    row |= {
        "ownerSalesRepId": None if owner is None else owner.sales_rep_id,
        "ownerHubspotOwnerId": None if owner is None else owner.hubspot_owner_id,
        "ownerIsFallback": state is not OwnerState.ASSIGNED,
        "response": answer,
    }
    return owner, state, _leads.insert_once(session, row, **activity)


def _replay(session: Session, subscription_id: uuid.UUID, key: str, fingerprint: str) -> Answer:
    existing = _leads.get_by_key(session, subscription_id, key)
    if existing is None:  # cannot happen: the conflict was on this key, committed
        raise RuntimeError(f"idempotency key conflict without a lead for {key!r}")
    if existing.requestFingerprint != fingerprint:
        return Answer(
            422,
            {
                "error": "idempotency_key_reused",
                "message": "this idempotency key was used for a different submission",
                "lead_id": str(existing.id),
            },
        )
    return Answer(200, dict(existing.response), {"Idempotent-Replayed": "true"})


def lead_view(session: Session, lead_id: uuid.UUID) -> tuple[uuid.UUID, dict[str, Any]] | None:
    """``(subscription id, GET /v1/leads/{id} body)``, or ``None``."""
    lead = _leads.get_by_id(session, lead_id)
    if lead is None:
        return None
    return lead.subscriptionId, {
        **dict(lead.response),
        "status": lead.status,
        "source": lead.source,
        "campaign_ids": list(lead.campaignIds),
        "contact": {
            "email": lead.email,
            "phone": lead.phone,
            "first_name": lead.firstName,
            "last_name": lead.lastName,
        },
    }


def lead_is_callers(session: Session, lead_id: uuid.UUID, subscription_id: uuid.UUID) -> bool:
    """Whether the lead exists *and* is the caller's: one answer for both, so ids cannot be
    probed from another subscription."""
    lead = _leads.get_by_id(session, lead_id)
    return lead is not None and lead.subscriptionId == subscription_id
