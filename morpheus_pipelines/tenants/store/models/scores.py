"""Score history (docs/pipeline.md): one row per tenant per scored partition, with its bucket."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import CheckConstraint, DateTime, Index, Numeric, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.platform.store.model_base import Base


class TenantScoreSnapshot(Base):
    """A score as it was computed, with per-signal contributions so it can be explained.

    Keyed by partition and tenant so that re-materialising a partition replaces its rows.
    """

    __tablename__ = "apac_tenant_score_snapshots"

    partition_key: Mapped[str] = mapped_column(Text, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    tenant_bucket: Mapped[str] = mapped_column(Text, nullable=False)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    score_model_version: Mapped[str] = mapped_column(Text, nullable=False)
    total_score: Mapped[Decimal] = mapped_column(Numeric(6, 2), nullable=False)
    calculated_priority: Mapped[str] = mapped_column(Text, nullable=False)
    priority: Mapped[str] = mapped_column(Text, nullable=False)
    priority_reason: Mapped[str | None] = mapped_column(Text)
    contributions: Mapped[dict] = mapped_column(JSONB, nullable=False)
    scored_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    # The scoring input and model the score was computed from (docs/scoring.md, "Incremental
    # scoring"): the next day copies the row when they did not change.
    input_fingerprint: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        CheckConstraint("tenant_bucket IN ('active', 'sales_owned')", name="tenant_bucket"),
        Index(None, "tenant_id"),
    )


class ScoringModelRecord(Base):
    """Each scoring model version the warehouse has scored with, as its first run recorded
    it (docs/scoring.md, "Versions"): the numbers that explain a score of that version after
    the model file has changed, and what stops one version from naming two sets of numbers."""

    __tablename__ = "apac_scoring_models"

    score_model_version: Mapped[str] = mapped_column(Text, primary_key=True)
    # ``ScoringModel.fingerprint``: equal numbers, equal fingerprint.
    fingerprint: Mapped[str] = mapped_column(Text, nullable=False)
    # ``rules.scoring_model.model_document``: what ``parse_model`` reads back.
    document: Mapped[dict] = mapped_column(JSONB, nullable=False)
    first_partition_key: Mapped[str] = mapped_column(Text, nullable=False)
    first_run_id: Mapped[str] = mapped_column(Text, nullable=False)
    recorded_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
