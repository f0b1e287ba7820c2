"""The ownership block: who a re-engagement contact's call goes to (docs/ownership.md).

Every re-engagement handler asks the same question, so it is answered here once, over the
repositories, with no Dagster and no HTTP:

1. **The reassignment test.** Ownership is sticky unless it is not real: a contact needs an
   owner when it has none, when its owner is :data:`DIALER_FALLBACK_HUBSPOT_OWNER_ID` (the AI
   dialer, "not a human"), or when its owner is not an active ``sales_reps`` row (a departed
   or deactivated rep, whose leads must not be stranded).
2. **Deal-owner routing** (no-show, lost deal): a deal already has an accountable human. If
   the deal's owner passes the active-rep test, the call goes to them through
   ``call_assigned_to``; the record stays with its owner when that owner is real, and goes
   to the deal's owner when it is not (no rotation slot is used). A departed deal owner falls
   through to the reassignment test.
3. **Round-robin** for the contacts that need an owner: one
   ``reserve_sales_rep_round_robin_batch`` per batch, never a loop of single picks.
   ``require_nooks`` is used only on the dialer path, which falls back to ``False`` and then
   to the AI owner.

A reassignment writes both ``hubspot_owner_id`` and ``call_assigned_to``. Anything else writes
**no** ``hubspot_owner_id``: that is the guard that stops automation taking a human's contact.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import AssignmentOutcome, ReengagementSegment, SalesRep
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    reserve_sales_rep_round_robin_batch,
)

# The AI fallback owner: owner of last resort for the dialer, owner of every AI call
# engagement, and the sentinel every segment reads as "no human owns this". Defined here once.
DIALER_FALLBACK_HUBSPOT_OWNER_ID = "86817215"


class NoRepPolicy(enum.Enum):
    """What a handler does when the rotation has nobody to give."""

    ENROL_UNASSIGNED = "enrol_unassigned"  # warn, enrol without an assignee
    ABORT_BATCH = "abort_batch"  # ERROR, enrol none of the batch
    FALLBACK_OWNER = "fallback_owner"  # retry without Nooks, then the AI owner


@dataclass(frozen=True)
class SegmentPolicy:
    """How one re-engagement handler applies the ownership block."""

    segment: ReengagementSegment
    no_rep: NoRepPolicy
    routes_to_deal_owner: bool = False
    prefers_nooks: bool = False
    # Email click only: a rep's call in the last few days already followed the contact up.
    skips_after_human_call: bool = False


SEGMENT_POLICIES: dict[ReengagementSegment, SegmentPolicy] = {
    policy.segment: policy
    for policy in (
        SegmentPolicy(
            ReengagementSegment.EMAIL_CLICK,
            NoRepPolicy.ENROL_UNASSIGNED,
            skips_after_human_call=True,
        ),
        SegmentPolicy(ReengagementSegment.SUPPLIER, NoRepPolicy.ENROL_UNASSIGNED),
        SegmentPolicy(
            ReengagementSegment.NO_SHOW, NoRepPolicy.ENROL_UNASSIGNED, routes_to_deal_owner=True
        ),
        SegmentPolicy(
            ReengagementSegment.LOST_DEAL, NoRepPolicy.ENROL_UNASSIGNED, routes_to_deal_owner=True
        ),
        SegmentPolicy(ReengagementSegment.CAMPAIGN_TARGET, NoRepPolicy.ABORT_BATCH),
        SegmentPolicy(
            ReengagementSegment.DIALER_CALL_ENDED, NoRepPolicy.FALLBACK_OWNER, prefers_nooks=True
        ),
    )
}


def is_placeholder_owner(owner_id: str | None) -> bool:
    """No owner, or the AI dialer: nobody human is working the contact."""
    return not owner_id or owner_id == DIALER_FALLBACK_HUBSPOT_OWNER_ID


def active_rep(
    session: Session,
    owner_id: str | None,
    subscription_id: uuid.UUID,
    *,
    sales_rep_repo: SalesRepRepository,
) -> SalesRep | None:
    """The active rep behind a HubSpot owner id; ``None`` for no owner, the AI owner, or an
    owner who is not an active rep of the subscription."""
    if owner_id is None or is_placeholder_owner(owner_id):
        return None
    return sales_rep_repo.get_active_by_hubspot_owner_id(session, owner_id, subscription_id)


def needs_owner(
    session: Session,
    current_owner: str | None,
    subscription_id: uuid.UUID,
    *,
    sales_rep_repo: SalesRepRepository,
) -> bool:
    """The three-part reassignment test: no owner, the AI owner, or an owner that is not an
    active rep of the subscription."""
    return (
        active_rep(session, current_owner, subscription_id, sales_rep_repo=sales_rep_repo) is None
    )


@dataclass(frozen=True)
class OwnershipRequest:
    """One contact to route: its current HubSpot owner and, for the deal segments, the
    deal's owner."""

    contact_id: int
    current_owner: str | None
    deal_owner: str | None = None


@dataclass(frozen=True)
class OwnershipDecision:
    """The block's answer for one contact. ``hubspot_owner_id`` / ``call_assigned_to`` are
    the values to write to HubSpot; ``None`` means "do not write that property"."""

    contact_id: int
    outcome: AssignmentOutcome
    rep: SalesRep | None
    hubspot_owner_id: str | None
    call_assigned_to: str | None
    round_robin: bool = False

    @property
    def writes_properties(self) -> bool:
        return self.hubspot_owner_id is not None or self.call_assigned_to is not None


class NoRepAvailable(RuntimeError):
    """The rotation is empty and the segment's policy is to abort the whole batch."""


def decide_ownership(
    session: Session,
    subscription_id: uuid.UUID,
    policy: SegmentPolicy,
    requests: Sequence[OwnershipRequest],
    *,
    sales_rep_repo: SalesRepRepository,
) -> list[OwnershipDecision]:
    """Decisions for a batch of contacts, in ``requests`` order.

    Contacts that keep their owner or go to their deal's owner are decided first; the rest
    share one round-robin reservation. Must run inside the caller's transaction that also
    records the decisions: the reservation's advisory lock is held until it commits, and a
    rollback gives the slots back. Raises :class:`NoRepAvailable` (before anything is
    reserved or written) when the segment aborts on an empty rotation.
    """
    decided: dict[int, OwnershipDecision] = {}
    rotation: list[tuple[int, OwnershipRequest]] = []
    for position, request in enumerate(requests):
        deal_rep = None
        if policy.routes_to_deal_owner:
            deal_rep = active_rep(
                session, request.deal_owner, subscription_id, sales_rep_repo=sales_rep_repo
            )
        owner = active_rep(
            session, request.current_owner, subscription_id, sales_rep_repo=sales_rep_repo
        )
        if policy.routes_to_deal_owner and deal_rep is not None:
            decided[position] = OwnershipDecision(
                request.contact_id,
                AssignmentOutcome.DEAL_OWNER,
                deal_rep,
                # The record keeps a real owner; one it does not have (none, the AI, a
                # departed rep) is the deal's owner, the human already accountable.
                hubspot_owner_id=None if owner is not None else deal_rep.hubspotOwnerId,
                call_assigned_to=deal_rep.hubspotOwnerId,
            )
            continue
        if owner is not None:
            decided[position] = _call_only(request, AssignmentOutcome.KEPT_OWNER, owner)
        else:
            rotation.append((position, request))

    reps = _reserve(session, subscription_id, policy, len(rotation), sales_rep_repo)
    if rotation and not reps and policy.no_rep is NoRepPolicy.ABORT_BATCH:
        raise NoRepAvailable(
            f"no active sales rep with a HubSpot owner id in subscription {subscription_id}: "
            f"{policy.segment.value} batch of {len(requests)} aborted, none enrolled"
        )
    for index, (position, request) in enumerate(rotation):
        decided[position] = _rotation_decision(request, reps, index, policy)
    return [decided[position] for position in range(len(requests))]


def _call_only(
    request: OwnershipRequest, outcome: AssignmentOutcome, rep: SalesRep
) -> OwnershipDecision:
    """The call goes to ``rep``; the record's owner is not written (the guard)."""
    return OwnershipDecision(
        request.contact_id, outcome, rep, hubspot_owner_id=None, call_assigned_to=rep.hubspotOwnerId
    )


def _reserve(
    session: Session,
    subscription_id: uuid.UUID,
    policy: SegmentPolicy,
    count: int,
    sales_rep_repo: SalesRepRepository,
) -> list[SalesRep]:
    if count == 0:
        return []
    reps = reserve_sales_rep_round_robin_batch(
        session,
        subscription_id,
        require_nooks=policy.prefers_nooks,
        count=count,
        sales_rep_repo=sales_rep_repo,
    )
    if not reps and policy.prefers_nooks:
        # A missing Nooks configuration degrades to HubSpot-only assignment, not failure.
        reps = reserve_sales_rep_round_robin_batch(
            session,
            subscription_id,
            require_nooks=False,
            count=count,
            sales_rep_repo=sales_rep_repo,
        )
    return reps


def _rotation_decision(
    request: OwnershipRequest, reps: Sequence[SalesRep], index: int, policy: SegmentPolicy
) -> OwnershipDecision:
    if reps:
        rep = reps[index]
        return OwnershipDecision(
            request.contact_id,
            AssignmentOutcome.REASSIGNED,
            rep,
            hubspot_owner_id=rep.hubspotOwnerId,
            call_assigned_to=rep.hubspotOwnerId,
            round_robin=True,
        )
    if policy.no_rep is NoRepPolicy.FALLBACK_OWNER:
        return OwnershipDecision(
            request.contact_id,
            AssignmentOutcome.FALLBACK_OWNER,
            None,
            hubspot_owner_id=DIALER_FALLBACK_HUBSPOT_OWNER_ID,
            call_assigned_to=DIALER_FALLBACK_HUBSPOT_OWNER_ID,
        )
    return OwnershipDecision(
        request.contact_id,
        AssignmentOutcome.UNASSIGNED,
        None,
        hubspot_owner_id=None,
        call_assigned_to=None,
    )
