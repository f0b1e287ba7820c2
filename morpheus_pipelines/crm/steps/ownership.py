"""The ownership block's reads and reservation around the pure decision of
:mod:`morpheus_pipelines.crm.rules.ownership`."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import SalesRep
from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository
from morpheus_pipelines.crm.repositories.sales_rep_round_robin import (
    reserve_sales_rep_round_robin_batch,
)
from morpheus_pipelines.crm.rules.ownership import (
    OwnershipDecision,
    OwnershipRequest,
    SegmentPolicy,
    complete_ownership,
    is_placeholder_owner,
    plan_ownership,
)


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
    rollback gives the slots back. Raises ``NoRepAvailable`` (before anything is reserved or
    written) when the segment aborts on an empty rotation.
    """
    owners = {
        owner
        for request in requests
        for owner in (
            request.current_owner,
            request.deal_owner if policy.routes_to_deal_owner else None,
        )
        if owner is not None
    }
    active_reps: dict[str, SalesRep] = {}
    for owner in owners:
        rep = active_rep(session, owner, subscription_id, sales_rep_repo=sales_rep_repo)
        if rep is not None:
            active_reps[owner] = rep
    plan = plan_ownership(policy, requests, active_reps)
    reserved = _reserve(session, subscription_id, policy, len(plan.rotation), sales_rep_repo)
    return complete_ownership(
        plan, policy, reserved, subscription_id=subscription_id, batch_size=len(requests)
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
