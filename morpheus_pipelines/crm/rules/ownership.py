"""The ownership block: who a re-engagement contact's call goes to (docs/ownership.md).

Every re-engagement handler asks the same question, so it is answered here once, as a pure
function of the contacts, the active reps behind their owners and the reps the rotation gave
(:mod:`morpheus_pipelines.crm.steps.ownership` holds the lock, does the reads and reserves):

1. **The reassignment test.** Ownership is sticky unless it is not real: a contact needs an
   owner when it has none, when its owner is :data:`DIALER_FALLBACK_HUBSPOT_OWNER_ID` (the AI
   dialer, "not a human"), or when its owner is not an active ``sales_reps`` row (a departed
   or deactivated rep, whose leads must not be stranded).
2. **Deal-owner routing** (no-show, lost deal): a deal already has an accountable human. If
   the deal's owner passes the active-rep test, the call goes to them through
   ``call_assigned_to`` only; ``hubspot_owner_id`` is left untouched whoever holds it (no
   rotation slot is used). A departed deal owner falls through to the reassignment test.
3. **Round-robin** for the contacts that need an owner: one
   ``reserve_sales_rep_round_robin_batch`` per batch, never a loop of single picks.
   ``require_nooks`` is used only on the dialer path, which falls back to ``False`` and then
   to the AI owner.

A reassignment writes both ``hubspot_owner_id`` and ``call_assigned_to``; deal-owner routing
writes ``call_assigned_to`` only; a kept owner ("leave it alone") writes neither property.
Nothing but a reassignment writes ``hubspot_owner_id``: that is the guard that stops
automation taking a human's contact.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class Rep(Protocol):
    """What the decision reads of a sales rep (the ``sales_reps`` row in production)."""

    hubspotOwnerId: str | None


class ReengagementSegment(enum.StrEnum):
    """The re-engagement handlers, one per way a contact becomes worth a follow-up call."""

    EMAIL_CLICK = "email_click"
    SUPPLIER = "supplier"
    NO_SHOW = "no_show"
    LOST_DEAL = "lost_deal"
    CAMPAIGN_TARGET = "campaign_target"
    DIALER_CALL_ENDED = "dialer_call_ended"


class AssignmentOutcome(enum.StrEnum):
    """What the ownership block decided for one segment member."""

    KEPT_OWNER = "kept_owner"  # a real, active rep owns the contact: leave it alone, write nothing
    REASSIGNED = "reassigned"  # round-robin: both properties written
    DEAL_OWNER = "deal_owner"  # the deal's active owner gets call_assigned_to only
    FALLBACK_OWNER = "fallback_owner"  # dialer: nobody free, owner of last resort 86817215
    UNASSIGNED = "unassigned"  # nobody free: enrolled without an assignee
    SKIPPED_ACTIVE_TASK = "skipped_active_task"  # already has live work: nothing created
    SKIPPED_RECENT_HUMAN_CALL = "skipped_recent_human_call"  # email click after a rep's call


class WriteBackStatus(enum.StrEnum):
    """Where the HubSpot half of an assignment is (docs/ownership.md, "Write-back")."""

    PENDING = "pending"  # committed locally, not yet (fully) written to HubSpot
    DONE = "done"
    NOT_NEEDED = "not_needed"  # nothing to write (a skipped member)
    REJECTED = "rejected"  # HubSpot does not know the contact; retrying cannot help


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
    rep: Rep | None
    hubspot_owner_id: str | None
    call_assigned_to: str | None
    round_robin: bool = False

    @property
    def writes_properties(self) -> bool:
        return self.hubspot_owner_id is not None or self.call_assigned_to is not None


class NoRepAvailable(RuntimeError):
    """The rotation is empty and the segment's policy is to abort the whole batch."""


@dataclass
class OwnershipPlan:
    """The first pass over a batch: the contacts already decided (kept owner, deal owner) by
    position, and the positions that wait for the rotation, in order."""

    decided: dict[int, OwnershipDecision] = field(default_factory=dict)
    rotation: list[tuple[int, OwnershipRequest]] = field(default_factory=list)


def plan_ownership(
    policy: SegmentPolicy,
    requests: Sequence[OwnershipRequest],
    active_reps: Mapping[str, Rep],
) -> OwnershipPlan:
    """Decide every contact that needs no rotation slot.

    ``active_reps`` maps the HubSpot owner id of every *active* rep of the subscription among
    the requests' owners to that rep; an owner missing from it is no owner (none, the AI
    owner, or a departed rep).
    """
    plan = OwnershipPlan()
    for position, request in enumerate(requests):
        owner = _active(request.current_owner, active_reps)
        deal_rep = _active(request.deal_owner, active_reps) if policy.routes_to_deal_owner else None
        if deal_rep is not None:
            plan.decided[position] = OwnershipDecision(
                request.contact_id,
                AssignmentOutcome.DEAL_OWNER,
                deal_rep,
                hubspot_owner_id=None,  # the record's owner is never this routing's to move
                call_assigned_to=deal_rep.hubspotOwnerId,
            )
        elif owner is not None:
            plan.decided[position] = _left_alone(request, owner)
        else:
            plan.rotation.append((position, request))
    return plan


def complete_ownership(
    plan: OwnershipPlan,
    policy: SegmentPolicy,
    reserved: Sequence[Rep],
    *,
    subscription_id: uuid.UUID,
    batch_size: int,
) -> list[OwnershipDecision]:
    """Every decision of the batch, in request order, once the rotation has given
    ``reserved`` (one rep per waiting contact, or none at all). Raises
    :class:`NoRepAvailable` when the rotation gave nobody and the segment aborts."""
    if plan.rotation and not reserved and policy.no_rep is NoRepPolicy.ABORT_BATCH:
        raise NoRepAvailable(
            f"no active sales rep with a HubSpot owner id in subscription {subscription_id}: "
            f"{policy.segment.value} batch of {batch_size} aborted, none enrolled"
        )
    decided = dict(plan.decided)
    for index, (position, request) in enumerate(plan.rotation):
        decided[position] = _rotation_decision(request, reserved, index, policy)
    return [decided[position] for position in range(batch_size)]


def _active(owner_id: str | None, active_reps: Mapping[str, Rep]) -> Rep | None:
    if is_placeholder_owner(owner_id):
        return None
    return active_reps.get(owner_id)


def _left_alone(request: OwnershipRequest, rep: Rep) -> OwnershipDecision:
    """The contact's own active rep keeps it and its call: neither property is written (the
    follow-up task and the rep's list still carry the call)."""
    return OwnershipDecision(
        request.contact_id,
        AssignmentOutcome.KEPT_OWNER,
        rep,
        hubspot_owner_id=None,
        call_assigned_to=None,
    )


def _rotation_decision(
    request: OwnershipRequest, reps: Sequence[Rep], index: int, policy: SegmentPolicy
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
