"""Score history (docs/pipeline.md): one row per tenant per scored partition, with its bucket,
stored as versions valid for a range of days."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    Numeric,
    PrimaryKeyConstraint,
    Table,
    Text,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.platform.store.model_base import VIEWS, Base, WrittenDay


class TenantScoreVersion(Base):
    """A tenant's score, valid for the days ``[valid_from, valid_to)`` (open while
    ``valid_to`` is NULL): written when its scoring input, bucket or model changes, not every
    day (docs/scoring.md, "How scores are stored").

    The score columns are the scorer's answer for ``scored_for``. A version whose
    ``recency_key`` is NULL has its recency points moved to each day it answers when the day
    is read (the view ``apac_tenant_score_snapshots``): the total, both priorities and the
    ``recency`` contribution follow from ``last_active_at`` and the version's model. Any other
    version answers as stored, and its ``recency_key`` (the day it was scored for and its
    total) makes the next day's score a change of its own.
    """

    __tablename__ = "apac_tenant_score_versions"
    __table_args__ = (
        CheckConstraint("tenant_bucket IN ('active', 'sales_owned')", name="tenant_bucket"),
        CheckConstraint("valid_to IS NULL OR valid_to > valid_from", name="valid_range"),
        CheckConstraint("scored_for <= valid_from", name="scored_before_valid"),
        {"postgresql_with": {"fillfactor": 90}},
    )

    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_from: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_to: Mapped[str | None] = mapped_column(Text)
    tenant_bucket: Mapped[str] = mapped_column(Text, nullable=False)
    score_model_version: Mapped[str] = mapped_column(Text, nullable=False)
    # The numbers (``version_number``) of the candidate, answer and decision versions the
    # score was computed from: the same numbers and model, the same score but for the recency
    # points. NULL candidate and decision: stored before scores named their inputs, so no
    # day's input is theirs.
    candidate_version: Mapped[int | None] = mapped_column(BigInteger)
    answer_version: Mapped[int | None] = mapped_column(BigInteger)
    decision_version: Mapped[int | None] = mapped_column(BigInteger)
    recency_key: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    scored_for: Mapped[str] = mapped_column(Text, nullable=False)
    scored_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    total_score: Mapped[Decimal] = mapped_column(Numeric(6, 2), nullable=False)
    calculated_priority: Mapped[str] = mapped_column(Text, nullable=False)
    priority: Mapped[str] = mapped_column(Text, nullable=False)
    priority_reason: Mapped[str | None] = mapped_column(Text)
    contributions: Mapped[dict] = mapped_column(JSONB, nullable=False)
    last_active_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # After this moment a version that moves its recency may answer other points than it
    # stores: the view computes only those (NULL: never).
    recency_moves_from: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class TenantScoreDay(WrittenDay, Base):
    """A day whose scores were written: the days ``apac_tenant_score_snapshots`` answers."""

    __tablename__ = "apac_tenant_score_days"

    # When the run that last wrote the day's scores into the live bucket rows began, and
    # which run it was: the bucket rows routing wrote since then, and the scores other runs
    # wrote since, are compared with the next live day's scores (docs/scoring.md, "How
    # scores are stored"). NULL: never live.
    live_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    live_run_id: Mapped[str | None] = mapped_column(Text)


# The view's columns, in its order: one row per tenant per scored day (docs/pipeline.md).
SNAPSHOT_VIEW_COLUMNS = (
    Column("partition_key", Text, nullable=False),
    Column("tenant_id", Text, nullable=False),
    Column("tenant_bucket", Text, nullable=False),
    Column("run_id", Text, nullable=False),
    Column("score_model_version", Text, nullable=False),
    Column("total_score", Numeric(6, 2), nullable=False),
    Column("calculated_priority", Text, nullable=False),
    Column("priority", Text, nullable=False),
    Column("priority_reason", Text),
    Column("contributions", JSONB, nullable=False),
    Column("scored_at", DateTime(timezone=True), nullable=False),
    # The scoring input the recency points were computed from.
    Column("last_active_at", DateTime(timezone=True)),
)


class TenantScoreSnapshot(Base):
    """A score as a day answers it, with per-signal contributions so it can be explained: the
    view ``apac_tenant_score_snapshots`` over the versions valid on each written day, their
    recency points moved to the day. Read only."""

    __table__ = Table(
        "apac_tenant_score_snapshots",
        VIEWS,
        *SNAPSHOT_VIEW_COLUMNS,
        PrimaryKeyConstraint("partition_key", "tenant_id"),
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
