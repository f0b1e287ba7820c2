"""A rep's hand-over (docs/ownership.md, "When a rep leaves"): one row each time a departed
rep's open leads and live tasks were given to others, with what moved where, for the Daily
Summary and for anyone asking later where a rep's leads went."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, ForeignKey, Index, Integer, func
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.platform.store.model_base import Base


def _count() -> Mapped[int]:
    return mapped_column(Integer, nullable=False, server_default="0")


class RepHandOver(Base):
    __tablename__ = "rep_hand_overs"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    subscriptionId: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), ForeignKey("subscriptions.id"), nullable=False
    )
    salesRepId: Mapped[int] = mapped_column(ForeignKey("sales_reps.id"), nullable=False)
    startedAt: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
    # NULL while the hand-over runs (it commits chunk by chunk; a crash leaves it open and the
    # next run finishes the rep's remaining work in a new hand-over).
    finishedAt: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    leadsRerouted: Mapped[int] = _count()  # to a pool member, charged like a new lead
    leadsToFallback: Mapped[int] = _count()  # to a fallback rep
    leadsWaiting: Mapped[int] = _count()  # nobody assignable: waiting, listed, routed later
    tasksMoved: Mapped[int] = _count()
    tasksUnowned: Mapped[int] = _count()  # nobody to take them: unowned, still escalated
    # {"<new sales rep id>": {"leads": n, "tasks": m}}: where the work went.
    moves: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, server_default="{}")

    __table_args__ = (Index(None, "subscriptionId", "startedAt"),)
