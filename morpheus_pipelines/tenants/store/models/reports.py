"""Report tables for BI: the Daily Summary and the Weekly Metrics (docs/reports.md).

Both are computed from ``apac_active_tenants`` only; Sales-owned tenants never appear here.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Integer,
    Numeric,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.platform.store.model_base import Base


class DailySummaryTenant(Base):
    """A P0/P1 tenant that is new or changed priority on the partition's day, and why."""

    __tablename__ = "apac_daily_summary_tenants"

    partition_key: Mapped[str] = mapped_column(Text, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    name: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[str] = mapped_column(Text, nullable=False)
    previous_priority: Mapped[str | None] = mapped_column(Text)
    change: Mapped[str] = mapped_column(Text, nullable=False)  # new | changed
    reason: Mapped[str] = mapped_column(Text, nullable=False)
    hubspot_match_method: Mapped[str | None] = mapped_column(Text)
    hubspot_company_id: Mapped[str | None] = mapped_column(Text)
    total_score: Mapped[Decimal | None] = mapped_column(Numeric(6, 2))
    run_id: Mapped[str] = mapped_column(Text, nullable=False)


class DailySummaryMetric(Base):
    """One figure of a Daily Summary: ``metric`` by ``dimension`` (e.g. tenants by priority)."""

    __tablename__ = "apac_daily_summary_metrics"

    partition_key: Mapped[str] = mapped_column(Text, primary_key=True)
    metric: Mapped[str] = mapped_column(Text, primary_key=True)
    dimension: Mapped[str] = mapped_column(Text, primary_key=True)
    value: Mapped[Decimal] = mapped_column(Numeric(14, 2), nullable=False)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)


class WeeklyMetric(Base):
    """One figure of the Weekly Metrics: per week, per day (or the week total), per metric."""

    __tablename__ = "apac_weekly_metrics"

    week_key: Mapped[str] = mapped_column(Text, primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    metric: Mapped[str] = mapped_column(Text, primary_key=True)
    dimension: Mapped[str] = mapped_column(Text, primary_key=True)
    value: Mapped[Decimal] = mapped_column(Numeric(14, 2), nullable=False)
    days_with_data: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)


class ReportDelivery(Base):
    """One report of one partition sent (or being sent) to one reader by one channel
    (docs/reports.md, "Delivery"): claimed before it is sent, so a re-run sends nothing twice.

    ``status``: ``sending`` (claimed), ``sent``, ``failed`` (``retryable``: certainly not sent,
    tried again by the next run) or ``unknown`` (the answer was lost or the run died while
    sending: it may have arrived, so it is not sent again; a person decides)."""

    __tablename__ = "report_deliveries"
    __table_args__ = (UniqueConstraint("report", "partition_key", "channel", "recipient"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    report: Mapped[str] = mapped_column(Text, nullable=False)  # daily_summary | weekly_metrics
    partition_key: Mapped[str] = mapped_column(Text, nullable=False)
    channel: Mapped[str] = mapped_column(Text, nullable=False)  # email | slack
    recipient: Mapped[str] = mapped_column(Text, nullable=False)  # an address, or "webhook"
    status: Mapped[str] = mapped_column(Text, nullable=False)
    retryable: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=1)
    error: Mapped[str | None] = mapped_column(Text)
    message_id: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
