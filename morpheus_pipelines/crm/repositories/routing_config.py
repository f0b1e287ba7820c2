"""Repository that writes the routing configuration (docs/leads.md, "Routing"): pools, their
members and rules, one subscription at a time, as ``morpheus pool`` sets them up. The intake
reads the same tables through :mod:`.routing_directory`; the tables' triggers tell a running
service to reload.
"""

from __future__ import annotations

import uuid

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from morpheus_pipelines.crm.models import Lead, RoutingPool, RoutingPoolMember, RoutingPoolRule
from morpheus_pipelines.platform.store.base import BaseRepository


class RoutingConfigRepository(BaseRepository[RoutingPool]):
    model_class = RoutingPool

    # -- pools --------------------------------------------------------------------------------

    def pool_named(
        self, session: Session, subscription_id: uuid.UUID, name: str, *, lock: bool = False
    ) -> RoutingPool | None:
        statement = select(RoutingPool).where(
            RoutingPool.subscriptionId == subscription_id, RoutingPool.name == name
        )
        return session.scalars(statement.with_for_update() if lock else statement).one_or_none()

    def default_pool(self, session: Session, subscription_id: uuid.UUID) -> RoutingPool | None:
        return session.scalars(
            select(RoutingPool).where(
                RoutingPool.subscriptionId == subscription_id, RoutingPool.isDefault.is_(True)
            )
        ).one_or_none()

    def pools(self, session: Session, subscription_id: uuid.UUID) -> list[RoutingPool]:
        """The subscription's pools by name."""
        return list(
            session.scalars(
                select(RoutingPool)
                .where(RoutingPool.subscriptionId == subscription_id)
                .order_by(RoutingPool.name)
            )
        )

    def add_pool(self, session: Session, subscription_id: uuid.UUID, name: str) -> RoutingPool:
        pool = RoutingPool(subscriptionId=subscription_id, name=name, isDefault=False)
        session.add(pool)
        session.flush()
        return pool

    def leads_of_pool(self, session: Session, pool_id: int) -> int:
        return session.scalar(select(func.count()).where(Lead.poolId == pool_id)) or 0

    def remove_pool(self, session: Session, pool_id: int) -> None:
        """Delete the pool and its member rows; the caller has made sure no rule and no lead
        refers to it."""
        session.execute(delete(RoutingPoolMember).where(RoutingPoolMember.poolId == pool_id))
        session.execute(delete(RoutingPool).where(RoutingPool.id == pool_id))

    # -- members ------------------------------------------------------------------------------

    def member(self, session: Session, pool_id: int, rep_id: int) -> RoutingPoolMember | None:
        return session.scalars(
            select(RoutingPoolMember)
            .where(RoutingPoolMember.poolId == pool_id, RoutingPoolMember.salesRepId == rep_id)
            .with_for_update()
        ).one_or_none()

    def members(self, session: Session, pool_id: int) -> list[RoutingPoolMember]:
        """The pool's members, assignable or not, by rep id."""
        return list(
            session.scalars(
                select(RoutingPoolMember)
                .where(RoutingPoolMember.poolId == pool_id)
                .order_by(RoutingPoolMember.salesRepId)
            )
        )

    def add_member(self, session: Session, pool_id: int, rep_id: int, weight: int) -> None:
        session.add(RoutingPoolMember(poolId=pool_id, salesRepId=rep_id, weight=weight))
        session.flush()

    # -- rules --------------------------------------------------------------------------------

    def rules(self, session: Session, subscription_id: uuid.UUID) -> list[RoutingPoolRule]:
        """The subscription's rules by id."""
        return list(
            session.scalars(
                select(RoutingPoolRule)
                .where(RoutingPoolRule.subscriptionId == subscription_id)
                .order_by(RoutingPoolRule.id)
            )
        )

    def rules_matching(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        source: str | None,
        campaign_id: str | None,
    ) -> list[RoutingPoolRule]:
        """The rules with exactly this source and campaign id (``None``: the rule has none)."""
        statement = select(RoutingPoolRule).where(
            RoutingPoolRule.subscriptionId == subscription_id,
            RoutingPoolRule.source.is_(None)
            if source is None
            else RoutingPoolRule.source == source,
            RoutingPoolRule.campaignId.is_(None)
            if campaign_id is None
            else RoutingPoolRule.campaignId == campaign_id,
        )
        return list(session.scalars(statement.order_by(RoutingPoolRule.id).with_for_update()))

    def add_rule(
        self,
        session: Session,
        subscription_id: uuid.UUID,
        pool_id: int,
        *,
        source: str | None,
        campaign_id: str | None,
        priority: int,
    ) -> RoutingPoolRule:
        rule = RoutingPoolRule(
            subscriptionId=subscription_id,
            poolId=pool_id,
            source=source,
            campaignId=campaign_id,
            priority=priority,
        )
        session.add(rule)
        session.flush()
        return rule

    def leads_of_rule(self, session: Session, rule_id: int) -> int:
        return session.scalar(select(func.count()).where(Lead.poolRuleId == rule_id)) or 0

    def remove_rule(self, session: Session, rule_id: int) -> None:
        session.execute(delete(RoutingPoolRule).where(RoutingPoolRule.id == rule_id))
