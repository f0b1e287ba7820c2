"""Repository of the routing configuration (docs/leads.md, "Routing"): the pools, their members
and rules, read for every subscription at once into the intake cache. Not among the 16 exports
of ``morpheus_pipelines.crm.repositories``; import it from this module.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import RoutingPool, RoutingPoolMember, RoutingPoolRule, SalesRep
from morpheus_pipelines.crm.rules.availability import DAYS
from morpheus_pipelines.platform.store.base import BaseRepository


@dataclass(frozen=True)
class Candidate:
    """A rep a pool may give a lead to, with its weight in that pool (``sales_rep_id`` is
    ``None`` only for the AI owner of last resort, who is not a rep)."""

    sales_rep_id: int | None
    hubspot_owner_id: str
    weight: int = 1


@dataclass
class SubscriptionRouting:
    """What intake needs to route one subscription's leads: pools with their eligible
    members (whether one is available now is the claim statement's to decide), the rules,
    the default pool (a pool's fallback rep is read in the lead's transaction instead).
    ``None`` as a pool id is the implicit default pool (every active rep with a HubSpot owner
    id) of a subscription without one."""

    pools: dict[int | None, list[Candidate]] = field(default_factory=dict)
    pool_names: dict[int | None, str] = field(default_factory=dict)
    rules: list[tuple[int, int, str | None, str | None, int]] = field(default_factory=list)
    default_pool: int | None = None


def available_sql(rep: str, at: str = "now()") -> str:
    """The rep (``rep`` is the table or its alias) is available at ``at`` (the database's
    ``now()`` unless a test gives another instant): inside working hours in their own zone,
    not away, below the cap (docs/ownership.md, "Availability and capacity"); the twin of
    :func:`morpheus_pipelines.crm.rules.availability.is_available`."""
    local = f"({at} AT TIME ZONE coalesce({rep}.\"timeZone\", 'UTC'))"
    days = ", ".join(f"'{d}'" for d in DAYS)
    clock = f"to_char({local}, 'HH24:MI')"
    return (
        f'({rep}."awayUntil" IS NULL OR {rep}."awayUntil" <= {at})'
        f' AND ({rep}."maxOpenLeads" IS NULL OR {rep}."openLeads" < {rep}."maxOpenLeads")'
        f' AND ({rep}."workingHours" IS NULL OR EXISTS ('
        f'SELECT FROM jsonb_array_elements(coalesce({rep}."workingHours" -> '
        f"(ARRAY[{days}])[extract(isodow FROM {local})::int], '[]')) AS span "
        f"WHERE span ->> 0 <= {clock} AND {clock} < span ->> 1))"
    )


# A rep the owner cache may propose: active, with a HubSpot owner id to write (what the
# routing triggers notify about).
ELIGIBLE = (
    SalesRep.isActive.is_(True),
    SalesRep.hubspotOwnerId.is_not(None),
    SalesRep.hubspotOwnerId != "",
)
# A rep intake may give a lead to now: eligible and available. The time-driven part is never
# cached: the claim statement evaluates it at the database's now().
ASSIGNABLE = (*ELIGIBLE, text(available_sql("sales_reps")))


class RoutingDirectoryRepository(BaseRepository[RoutingPool]):
    """Reads the routing configuration of every subscription at once (the intake cache)."""

    model_class = RoutingPool

    def load(self, session: Session) -> dict[uuid.UUID, SubscriptionRouting]:
        directory: dict[uuid.UUID, SubscriptionRouting] = {}
        for pool in session.scalars(select(RoutingPool).order_by(RoutingPool.id)):
            routing = directory.setdefault(pool.subscriptionId, SubscriptionRouting())
            routing.pools[pool.id] = []
            routing.pool_names[pool.id] = pool.name
            if pool.isDefault:
                routing.default_pool = pool.id
        members = session.execute(
            select(
                RoutingPool.subscriptionId,
                RoutingPoolMember.poolId,
                SalesRep.id,
                SalesRep.hubspotOwnerId,
                RoutingPoolMember.weight,
            )
            .join(RoutingPool, RoutingPool.id == RoutingPoolMember.poolId)
            .join(SalesRep, SalesRep.id == RoutingPoolMember.salesRepId)
            .where(RoutingPoolMember.isAssignable.is_(True), *ELIGIBLE)
            .order_by(RoutingPoolMember.poolId, SalesRep.id)
        )
        for subscription_id, pool_id, rep_id, owner_id, weight in members:
            directory[subscription_id].pools[pool_id].append(Candidate(rep_id, owner_id, weight))
        rules = session.execute(
            select(
                RoutingPoolRule.subscriptionId,
                RoutingPoolRule.id,
                RoutingPoolRule.poolId,
                RoutingPoolRule.source,
                RoutingPoolRule.campaignId,
                RoutingPoolRule.priority,
            )
        )
        for subscription_id, *rule in rules:
            directory.setdefault(subscription_id, SubscriptionRouting()).rules.append(tuple(rule))
        # Subscriptions without a default pool: every active rep with an owner id, weight 1.
        reps = session.execute(
            select(SalesRep.subscriptionId, SalesRep.id, SalesRep.hubspotOwnerId)
            .where(*ELIGIBLE)
            .order_by(SalesRep.id)
        )
        for subscription_id, rep_id, owner_id in reps:
            routing = directory.setdefault(subscription_id, SubscriptionRouting())
            if routing.default_pool is None:
                routing.pools.setdefault(None, []).append(Candidate(rep_id, owner_id))
                routing.pool_names[None] = "default"
        return directory

    def live_candidates(
        self, session: Session, subscription_id: uuid.UUID, pool_id: int | None
    ) -> list[Candidate]:
        """The same members as the cache, by a query per lead (the benchmark's baseline)."""
        if pool_id is None:
            statement = (
                select(SalesRep.id, SalesRep.hubspotOwnerId, 1)
                .where(SalesRep.subscriptionId == subscription_id, *ELIGIBLE)
                .order_by(SalesRep.id)
            )
        else:
            statement = (
                select(SalesRep.id, SalesRep.hubspotOwnerId, RoutingPoolMember.weight)
                .join(RoutingPoolMember, RoutingPoolMember.salesRepId == SalesRep.id)
                .where(
                    RoutingPoolMember.poolId == pool_id,
                    RoutingPoolMember.isAssignable.is_(True),
                    *ELIGIBLE,
                )
                .order_by(SalesRep.id)
            )
        return [Candidate(*row) for row in session.execute(statement)]
