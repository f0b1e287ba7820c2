"""``POST /v1/leads``, ``GET /v1/leads``, ``GET /v1/leads/{lead_id}`` and
``PATCH /v1/leads/{lead_id}``: a lead and its owner in one transaction (docs/leads.md,
"POST /v1/leads"), the subscription's leads in keyset pages, and a lead closed or reassigned
by hand ("PATCH /v1/leads/{lead_id}").

1. resolve the routing pool from the source and the campaign ids (most specific rule wins,
   else the default pool);
2. pick the least-loaded assignable member of the pool; when nobody is assignable, the owner
   ladder: the pool's fallback rep, the subscription's, else the lead waits without an owner
   (never the AI dialer's owner);
3. insert the lead with its owner and its answer, ``ON CONFLICT DO NOTHING`` on the
   idempotency key, and charge the owner only for a lead inserted; a conflict replays the
   stored answer (or refuses a different body under the same key);
   — in the same statement, the ``FORM`` activity on the lead's timeline; commit, then
   answer. With a member free, 2 and 3 are that one statement in autocommit (its own
   transaction, one round trip), run from the event loop on the intake's own connections
   when the owner cache holds the pool (:func:`new_lead_at_once`), else on a worker thread;
   the ladder runs in a transaction on a worker thread.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from morpheus_pipelines.crm.api import cursors
from morpheus_pipelines.crm.api.dependencies import (
    FORBIDDEN,
    Answer,
    Refused,
    idempotency_header,
    intake_of,
    invalid,
    lead_id_of,
    parsed,
    respond,
)
from morpheus_pipelines.crm.api.directory import OwnerDirectory
from morpheus_pipelines.crm.api.problems import problem
from morpheus_pipelines.crm.api.schemas import LeadIn, LeadPatchIn
from morpheus_pipelines.crm.models import Lead, SalesRep
from morpheus_pipelines.crm.repositories.leads import Candidate, LeadRepository, claim_params
from morpheus_pipelines.crm.repositories.routing_directory import SubscriptionRouting
from morpheus_pipelines.crm.repositories.subscriptions import SubscriptionRepository
from morpheus_pipelines.crm.rules.lead_intake import (
    Phone,
    PoolRule,
    choose_pool,
    idempotency_key,
    needs_region,
    normalise_email,
    normalise_phone,
    request_fingerprint,
)
from morpheus_pipelines.crm.rules.lead_status import LeadStatus, OwnerState
from morpheus_pipelines.crm.rules.timeline import FORM_EXTERNAL_ID_PREFIX
from morpheus_pipelines.platform.observability.events import log_event

_leads = LeadRepository()
_subscriptions = SubscriptionRepository()
DEFAULT_LEADS_PAGE = 50
MAX_LEADS_PAGE = 200
OWNER_STATES = ("assigned", "fallback", "waiting")


async def post_lead(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    header = idempotency_header(request)
    raw = await intake.read_json(request)
    lead = parsed(LeadIn, raw)
    if lead.subscription_id != subscription_id:
        return respond(FORBIDDEN)
    if lead.honeypot:
        log_event(
            "lead_honeypot_refused",
            level=logging.WARNING,
            subscription_id=str(subscription_id),
            origin=request.headers.get("origin"),
        )
        raise Refused(invalid("honeypot", "the form's hidden field was filled: not stored"))
    raw.pop("honeypot", None)  # an empty one is not part of the submission
    now = intake.now()
    new = new_lead_at_once(intake.directory, lead, raw, idempotency_header=header, now=now)
    if new is not None:
        # The usual lead: its one statement from the event loop, no worker thread.
        owner, stored = await intake.claim_and_insert(
            claim_params(new.row, new.candidates, pool_name=new.pool_name, **new.activity)
        )
        if stored is not None:
            return respond(new.created(owner, OwnerState.ASSIGNED, stored))
        # Nothing was written. A member was free, so an earlier delivery holds the key: its
        # answer. Nobody was free: the rest of the ladder, in a transaction.
        if owner is not None:
            return respond(await intake.in_transaction(new.replay))
        return respond(
            await intake.in_transaction(
                lambda session: create_lead(
                    session, intake.directory, lead, raw, idempotency_header=header, now=now
                )
            )
        )
    return respond(
        await intake.in_statement(
            lambda session: create_lead(
                session,
                intake.directory,
                lead,
                raw,
                idempotency_header=header,
                now=now,
                at_once=True,
            ),
            otherwise=lambda session: create_lead(
                session, intake.directory, lead, raw, idempotency_header=header, now=now
            ),
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


async def list_leads(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    query = _list_query(request)
    return respond(
        await intake.in_transaction(lambda session: leads_page(session, subscription_id, query))
    )


async def patch_lead(request: Request) -> Response:
    intake = intake_of(request)
    _, subscription_id = await intake.authorised(request)
    lead_id = lead_id_of(request)
    raw = await intake.read_json(request)
    change = parsed(LeadPatchIn, raw)
    if change.status is None and change.owner is None:
        raise Refused(invalid("body", "give status, owner or both"))
    now = intake.now()
    return respond(
        await intake.in_transaction(
            lambda session: change_lead(session, subscription_id, lead_id, change, now)
        )
    )


ROUTES = [
    Route("/v1/leads", post_lead, methods=["POST"]),
    Route("/v1/leads", list_leads, methods=["GET"]),
    Route("/v1/leads/{lead_id}", get_lead, methods=["GET"]),
    Route("/v1/leads/{lead_id}", patch_lead, methods=["PATCH"]),
]


@dataclass(frozen=True)
class NewLead:
    """What a lead's statement needs, worked out before it: the row, its pool's free-to-try
    members and the ``FORM`` activity; the normalised contact for the event line."""

    lead: LeadIn
    row: dict[str, Any]
    pool_id: int | None
    pool_name: str
    candidates: list[Candidate]
    activity: dict[str, Any]
    email: str | None
    phone: Phone | None

    @classmethod
    def of(
        cls,
        lead: LeadIn,
        raw_body: dict[str, Any],
        *,
        routing: Callable[[], SubscriptionRouting],
        region: Callable[[], str | None],
        idempotency_header: str | None,
        now: datetime | None,
    ) -> NewLead:
        """``routing`` and ``region`` (the subscription's default region, asked for only when
        the phone needs one) are read once the email passed, so a bad contact is refused
        before anything is read. Raises
        :class:`~morpheus_pipelines.crm.rules.lead_intake.InvalidContact` for an unusable
        email or phone (before anything is read or written)."""
        email = normalise_email(lead.contact.email)
        phone = normalise_phone(
            lead.contact.phone, region() if needs_region(lead.contact.phone) else None
        )
        key = idempotency_key(lead.source, lead.source_submission_id, idempotency_header)
        routes = routing()
        pool_id, rule_id = choose_pool(
            [PoolRule(*rule) for rule in routes.rules],
            lead.source,
            lead.campaign_ids,
            routes.default_pool,
        )
        created_at = now or datetime.now(UTC)
        fingerprint = request_fingerprint(raw_body)
        return cls(
            lead=lead,
            row=_lead_row(lead, key, fingerprint, email, phone, pool_id, rule_id, created_at),
            pool_id=pool_id,
            pool_name=routes.pool_names.get(pool_id, "default"),
            candidates=routes.pools.get(pool_id, []),
            activity={
                "activity_external_id": f"{FORM_EXTERNAL_ID_PREFIX}{key}",
                "activity_metadata": {
                    "source": lead.source,
                    "campaign_ids": list(lead.campaign_ids),
                },
            },
            email=email,
            phone=phone,
        )

    def replay(self, session: Session) -> Answer:
        """The answer to a delivery whose key an earlier one holds (:func:`_replay`)."""
        return _replay(
            session,
            self.lead.subscription_id,
            self.row["idempotencyKey"],
            self.row["requestFingerprint"],
        )

    def created(self, owner: Candidate | None, state: OwnerState, stored: Mapping) -> Answer:
        """The 201 of the lead stored with ``owner``, and its event line."""
        log_event(
            "lead_created",
            level=logging.INFO if state is OwnerState.ASSIGNED else logging.WARNING,
            lead_id=str(self.row["id"]),
            subscription_id=str(self.lead.subscription_id),
            source=self.lead.source,
            pool=self.pool_name,
            hubspot_owner_id=None if owner is None else owner.hubspot_owner_id,
            owner_state=state.value,
            contact_email=self.email,
            has_phone=self.phone is not None,
        )
        return Answer(201, dict(stored), {"Location": lead_location(self.row["id"])})


def new_lead_at_once(
    directory: OwnerDirectory,
    lead: LeadIn,
    raw_body: dict[str, Any],
    *,
    idempotency_header: str | None,
    now: datetime | None,
) -> NewLead | None:
    """The lead worked out with nothing read from the database (the owner cache fresh, no
    region needed for the phone, a member to try), or ``None``: :func:`create_lead` then
    does it all on a worker thread."""
    routing = directory.held(lead.subscription_id)
    if routing is None or needs_region(lead.contact.phone):
        return None
    new = NewLead.of(
        lead,
        raw_body,
        routing=lambda: routing,
        region=lambda: None,
        idempotency_header=idempotency_header,
        now=now,
    )
    return new if new.candidates else None


def create_lead(
    session: Session,
    directory: OwnerDirectory,
    lead: LeadIn,
    raw_body: dict[str, Any],
    *,
    idempotency_header: str | None = None,
    now: datetime | None = None,
    at_once: bool = False,
) -> Answer | None:
    """Create the lead and its owner (201), or replay the answer of an earlier delivery (200)
    or refuse a different body under its key (422). The caller's transaction commits the lead,
    the owner's load and the activity together. ``at_once``: only the usual case, a free
    candidate, whose one statement needs no transaction around it (the session may be in
    autocommit); ``None`` when it wrote nothing and the rest of the owner ladder is needed,
    to be run again without ``at_once`` in a transaction. Raises
    :class:`~morpheus_pipelines.crm.rules.lead_intake.InvalidContact` for an unusable email or
    phone (before anything is written)."""
    new = NewLead.of(
        lead,
        raw_body,
        routing=lambda: directory.routing(session, lead.subscription_id),
        region=lambda: _subscriptions.default_region(session, lead.subscription_id),
        idempotency_header=idempotency_header,
        now=now,
    )
    # The live directory's members are read here, the cache's are the routing's.
    candidates = directory.candidates(session, lead.subscription_id, new.pool_id)
    row, pool_name, activity = new.row, new.pool_name, new.activity
    if at_once:
        owner, stored = (
            _leads.claim_and_insert(session, row, candidates, pool_name=pool_name, **activity)
            if candidates
            else (None, None)
        )
        if owner is None:
            return None  # nobody free: the ladder, in a transaction
        state = OwnerState.ASSIGNED
    else:
        owner, state, stored = _store(session, row, candidates, new.pool_id, pool_name, activity)
    if stored is None:
        session.rollback()  # the owner's load charge belongs to the first delivery only
        return new.replay(session)
    return new.created(owner, state, stored)


def lead_location(lead_id: uuid.UUID | str) -> str:
    """Where a created lead is read (``Location`` of its 201)."""
    return f"/v1/leads/{lead_id}"


def _lead_row(
    lead: LeadIn,
    key: str,
    fingerprint: str,
    email: str | None,
    phone: Phone | None,
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
        "phone": None if phone is None else phone.e164,
        "phoneExtension": None if phone is None else phone.extension,
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
            problem(
                422,
                "idempotency_key_reused",
                "this idempotency key was used for a different submission",
                lead_id=str(existing.id),
            ),
        )
    return Answer(200, dict(existing.response), {"Idempotent-Replayed": "true"})


def lead_view(session: Session, lead_id: uuid.UUID) -> tuple[uuid.UUID, dict[str, Any]] | None:
    """``(subscription id, GET /v1/leads/{id} body)``, or ``None``."""
    lead = _leads.get_by_id(session, lead_id)
    if lead is None:
        return None
    return lead.subscriptionId, lead_json(lead, _leads.pool_name(session, lead.poolId))


def owner_state(lead: Lead) -> str:
    """``waiting`` (nobody owns it yet), ``fallback`` (a fallback rep holds it) or
    ``assigned``."""
    if lead.ownerHubspotOwnerId is None:
        return "waiting"
    return "fallback" if lead.ownerIsFallback else "assigned"


def lead_json(lead: Lead, pool: str | None) -> dict[str, Any]:
    """A lead as the API shows it now (its current owner, not the one of its 201)."""
    owner = (
        None
        if lead.ownerHubspotOwnerId is None
        else {"sales_rep_id": lead.ownerSalesRepId, "hubspot_owner_id": lead.ownerHubspotOwnerId}
    )
    return {
        "lead_id": str(lead.id),
        "status": lead.status,
        "owner": owner,
        "owner_state": owner_state(lead),
        "owner_is_fallback": lead.ownerIsFallback,
        "owner_set_by_hand": lead.ownerSetByHand,
        "pool": pool or "default",
        "source": lead.source,
        "source_submission_id": lead.sourceSubmissionId,
        "campaign_ids": list(lead.campaignIds),
        "contact": {
            "email": lead.email,
            "phone": lead.phone,
            "phone_extension": lead.phoneExtension,
            "first_name": lead.firstName,
            "last_name": lead.lastName,
        },
        "hubspot_contact_id": lead.hubspotContactId,
        "is_test": lead.isTest,
        "created_at": lead.createdAt.isoformat(),
        "closed_at": lead.closedAt.isoformat() if lead.closedAt else None,
        "load_released_at": lead.loadReleasedAt.isoformat() if lead.loadReleasedAt else None,
    }


# -- GET /v1/leads ----------------------------------------------------------------------------

_FILTERS = ("status", "owner_state", "source", "source_submission_id")


def _list_query(request: Request) -> dict[str, Any]:
    """The list's filters, limit and cursor, each checked (422 naming the parameter)."""
    params = request.query_params
    unknown = sorted(set(params) - {*_FILTERS, "limit", "cursor"})
    if unknown:
        raise Refused(invalid(unknown[0], "not a parameter of this list"))
    limit_text = params.get("limit", str(DEFAULT_LEADS_PAGE))
    if not (
        limit_text.isascii() and limit_text.isdigit() and 1 <= int(limit_text) <= MAX_LEADS_PAGE
    ):
        raise Refused(invalid("limit", f"limit must be an integer from 1 to {MAX_LEADS_PAGE}"))
    status = params.get("status")
    if status is not None and status not in {s.value for s in LeadStatus}:
        raise Refused(invalid("status", f"one of {', '.join(s.value for s in LeadStatus)}"))
    state = params.get("owner_state")
    if state is not None and state not in OWNER_STATES:
        raise Refused(invalid("owner_state", f"one of {', '.join(OWNER_STATES)}"))
    cursor = params.get("cursor")
    return {
        "limit": int(limit_text),
        "before": _decode_cursor(cursor) if cursor is not None else None,
        "status": status,
        "owner_state": state,
        "source": _text_filter(params, "source"),
        "source_submission_id": _text_filter(params, "source_submission_id"),
    }


def _text_filter(params: Any, name: str) -> str | None:
    """A free-text filter as given, refused when PostgreSQL text could not hold it (NUL):
    a 422 naming it rather than a database error."""
    value = params.get(name)
    if value is not None and "\x00" in value:
        raise Refused(invalid(name, f"{name} may not contain NUL (%00)"))
    return value


def _cursor(lead: Lead) -> str:
    return cursors.encode(lead.createdAt, lead.id.hex)


def _decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    position = cursors.decode(cursor, cursors.LEAD_CURSOR)
    if position is None:
        raise Refused(invalid("cursor", "cursor is not one this API returned"))
    return position[0], uuid.UUID(hex=position[1])


def leads_page(session: Session, subscription_id: uuid.UUID, query: dict[str, Any]) -> Answer:
    """A page of the caller's leads, newest first, and the cursor of the next (``None`` on
    the last)."""
    limit = query["limit"]
    rows = _leads.page(session, subscription_id, **{**query, "limit": limit + 1})
    more = len(rows) > limit
    rows = rows[:limit]
    return Answer(
        200,
        {
            "items": [lead_json(lead, pool) for lead, pool in rows],
            "next_cursor": _cursor(rows[-1][0]) if more else None,
        },
    )


# -- PATCH /v1/leads/{lead_id} ----------------------------------------------------------------


def change_lead(
    session: Session,
    subscription_id: uuid.UUID,
    lead_id: uuid.UUID,
    change: LeadPatchIn,
    now: datetime,
) -> Answer:
    """Reassign by hand (``owner``), then close (``status``), in one transaction; the lead as
    it is now. Both in one body reassign first, so the closed lead names its chosen owner.
    Repeating the same body changes nothing more."""
    lead = _leads.locked(session, lead_id)
    if lead is None or lead.subscriptionId != subscription_id:
        return FORBIDDEN
    if change.owner is not None:
        rep = session.get(SalesRep, change.owner.sales_rep_id)
        if (
            rep is None
            or rep.subscriptionId != subscription_id
            or not rep.isActive
            or not rep.hubspotOwnerId
        ):
            return Answer(
                422,
                invalid(
                    "owner.sales_rep_id",
                    "not an active rep of this subscription with a HubSpot owner id",
                ),
            )
        if _leads.reassign_by_hand(session, lead, rep.id, rep.hubspotOwnerId):
            log_event(
                "lead_reassigned_by_hand",
                lead_id=str(lead.id),
                subscription_id=str(subscription_id),
                sales_rep_id=rep.id,
                hubspot_owner_id=rep.hubspotOwnerId,
            )
    if change.status is not None and _leads.close(session, lead.id, status=change.status, at=now):
        log_event(
            "lead_closed",
            lead_id=str(lead.id),
            subscription_id=str(subscription_id),
            status=change.status,
        )
    session.flush()
    session.expire(lead)
    return Answer(200, lead_json(lead, _leads.pool_name(session, lead.poolId)))


def lead_is_callers(session: Session, lead_id: uuid.UUID, subscription_id: uuid.UUID) -> bool:
    """Whether the lead exists *and* is the caller's: one answer for both, so ids cannot be
    probed from another subscription."""
    lead = _leads.get_by_id(session, lead_id)
    return lead is not None and lead.subscriptionId == subscription_id
