"""The ``sales_reps`` mirror of HubSpot's owners (docs/ownership.md, "The sales-rep mirror").

Complete or nothing: every page of active and of archived owners is read before anything is
written, and the write is one transaction. A failed page leaves ``sales_reps`` exactly as it
was. Reps are matched on ``(subscriptionId, email)`` (case-insensitively); ``hubspotOwnerId``,
names and ``isActive`` follow HubSpot, while ``nooksUserId``, ``activeListId`` and ``profileId``
are ours and never touched. A rep whose owner disappeared or was archived is deactivated,
never deleted, and hands over in the same run (:mod:`.rep_hand_over`); a rep a person marked
as left (``leftAt``) stays inactive whatever HubSpot says. The AI dialer's owner
(``86817215``) is in HubSpot's owner list but is never mirrored as a rep: it stands for
"not a human".
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import SalesRep, Subscription
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, rep_list_intent
from morpheus_pipelines.crm.rules.owner_mirror import MirroredOwner, owner_list
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID
from morpheus_pipelines.crm.steps.rep_hand_over import (
    HandOver,
    departed_with_work,
    empty_call_list,
    hand_over_departed_reps,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient, HubSpotError
from morpheus_pipelines.platform.observability.events import log_event


class UnknownSubscription(LookupError):
    """The configured subscription has no row in ``subscriptions``."""


@dataclass
class MirrorOutcome:
    succeeded: bool
    error: str | None = None
    owners_active: int = 0
    owners_archived: int = 0
    without_email: int = 0
    duplicates: int = 0
    not_human: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # inserted, updated, ...
    requests: int = 0
    retries: int = 0
    duration_seconds: float = 0.0
    hand_overs: list[HandOver] = field(default_factory=list)
    # Inactive reps still holding an open lead or a live task after the run (0 when well).
    departed_with_work: int = 0


def require_subscription(session: Session, subscription_id: uuid.UUID) -> None:
    """Raise :class:`UnknownSubscription` naming the id when it is not a workspace here."""
    if session.get(Subscription, subscription_id) is None:
        raise UnknownSubscription(
            f"subscription {subscription_id} does not exist in the warehouse; create it with "
            "`morpheus subscription create` and set MORPHEUS_SUBSCRIPTION_ID to its id"
        )


def mirror_owners(
    client: HubSpotClient, session_factory: SessionFactory, subscription_id: uuid.UUID
) -> MirrorOutcome:
    """Read every owner page, then apply them to the subscription's reps in one transaction.
    A HubSpot failure returns ``succeeded=False`` with the (token-free) reason and changes
    nothing."""
    started = time.perf_counter()
    with session_factory() as session:
        require_subscription(session, subscription_id)
    try:
        active = [o for page in client.iter_owner_pages(archived=False) for o in page]
        archived = [o for page in client.iter_owner_pages(archived=True) for o in page]
    except HubSpotError as exc:
        log_event("sales_rep_mirror_failed", subscription_id=str(subscription_id), error=str(exc))
        return MirrorOutcome(
            succeeded=False,
            error=str(exc),
            requests=client.stats.requests,
            retries=client.stats.retries,
            duration_seconds=time.perf_counter() - started,
            # Reps deactivated before (or by a command) still hand over: that needs no read.
            hand_overs=hand_over_departed_reps(session_factory, subscription_id),
            departed_with_work=departed_with_work(session_factory, subscription_id),
        )
    owners = owner_list(active, archived, not_human=frozenset({DIALER_FALLBACK_HUBSPOT_OWNER_ID}))
    with session_factory() as session:
        counts = _apply(CrmStore(session), subscription_id, owners.owners)
    # Committed: no new lead reaches a deactivated rep, so what they hold can move now.
    hand_overs = hand_over_departed_reps(session_factory, subscription_id)
    outcome = MirrorOutcome(
        succeeded=True,
        owners_active=len(active),
        owners_archived=len(archived),
        without_email=owners.without_email,
        duplicates=owners.duplicates,
        not_human=owners.not_human,
        counts=counts,
        requests=client.stats.requests,
        retries=client.stats.retries,
        duration_seconds=time.perf_counter() - started,
        hand_overs=hand_overs,
        departed_with_work=departed_with_work(session_factory, subscription_id),
    )
    log_event("sales_rep_mirror_completed", subscription_id=str(subscription_id), **counts)
    return outcome


def _apply(
    store: CrmStore, subscription_id: uuid.UUID, owners: dict[str, MirroredOwner]
) -> dict[str, int]:
    """Insert, update, deactivate; counts per kind of change. Rows are locked so two mirrors
    of one subscription apply one after the other."""
    statement = (
        select(SalesRep)
        .where(SalesRep.subscriptionId == subscription_id)
        .order_by(SalesRep.id)
        .with_for_update()
    )
    existing = {rep.email.strip().lower(): rep for rep in store.session.scalars(statement)}
    counts = dict.fromkeys(("inserted", "updated", "reactivated", "deactivated", "unchanged"), 0)
    for email, owner in owners.items():
        rep = existing.get(email)
        wanted = {
            "hubspotOwnerId": owner.hubspot_owner_id,
            "firstName": owner.first_name,
            "lastName": owner.last_name,
            # A rep a person marked as left stays inactive.
            "isActive": owner.active and (rep is None or rep.leftAt is None),
        }
        if rep is None:
            rep = store.sales_reps.insert(
                store.session, {"subscriptionId": subscription_id, "email": email, **wanted}
            )
            counts["inserted"] += 1
            _queue_rep_list(store, subscription_id, rep)
            continue
        changed = {k: v for k, v in wanted.items() if getattr(rep, k) != v}
        if not changed:
            counts["unchanged"] += 1
            continue
        if changed.get("isActive") is True:
            counts["reactivated"] += 1
        elif changed.get("isActive") is False:
            counts["deactivated"] += 1
        else:
            counts["updated"] += 1
        store.sales_reps.update(store.session, rep, changed)
        if changed.get("isActive") is False:
            empty_call_list(store, subscription_id, rep)
    for email, rep in existing.items():
        if email not in owners and rep.isActive:
            store.sales_reps.update(store.session, rep, {"isActive": False})
            counts["deactivated"] += 1
            empty_call_list(store, subscription_id, rep)
    return counts


def _queue_rep_list(store: CrmStore, subscription_id: uuid.UUID, rep: SalesRep) -> None:
    """A new active rep gets their own HubSpot list for sequences (found by name when it
    exists), so list enrolment works for them without anyone setting ``activeListId``."""
    if rep.isActive and not rep.activeListId:
        store.outbox.enqueue(
            store.session,
            subscription_id,
            OutboxKind.REP_LIST,
            rep_list_intent(rep.id),
            sales_rep_id=rep.id,
        )
