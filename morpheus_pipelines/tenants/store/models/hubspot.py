"""The local HubSpot target-account snapshot (docs/pipeline.md): exactly the specified columns,
and the snapshot as routing prepared it for matching."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, DateTime, Index, Integer, Text, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.platform.store.model_base import Base


class HubSpotTargetAccount(Base):
    """One company of the latest complete, successful mirror of the target-account list."""

    __tablename__ = "apac_hubspot_target_accounts"

    hubspot_company_id: Mapped[str] = mapped_column(Text, primary_key=True)
    membership_timestamp: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    portal_id: Mapped[str | None] = mapped_column(Text)
    account_id: Mapped[str | None] = mapped_column(Text)
    name: Mapped[str | None] = mapped_column(Text)
    account_alias: Mapped[str | None] = mapped_column(Text)
    domain: Mapped[str | None] = mapped_column(Text)
    website: Mapped[str | None] = mapped_column(Text)
    additional_domains: Mapped[str | None] = mapped_column(Text)
    domain_root: Mapped[str | None] = mapped_column(Text)
    website_domain_root: Mapped[str | None] = mapped_column(Text)
    additional_domain_roots: Mapped[list[str] | None] = mapped_column(JSONB)
    hubspot_modified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    sync_id: Mapped[str] = mapped_column(Text, nullable=False)
    synced_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)

    __table_args__ = (
        Index(None, "sync_id"),
        Index(None, "portal_id"),
        Index(None, "account_id"),
    )


class HubSpotTargetSyncState(Base):
    """Operational state of one list: the last success and the last attempt."""

    __tablename__ = "apac_hubspot_target_sync_state"

    list_id: Mapped[str] = mapped_column(Text, primary_key=True)
    last_successful_sync_id: Mapped[str | None] = mapped_column(Text)
    last_successful_sync_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_successful_list_total: Mapped[int | None] = mapped_column(Integer)
    last_successful_snapshot_hash: Mapped[str | None] = mapped_column(Text)
    last_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_attempt_status: Mapped[str | None] = mapped_column(Text)
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        CheckConstraint("last_attempt_status IN ('success', 'failed')", name="last_attempt_status"),
    )


class HubSpotPreparedSnapshot(Base):
    """The snapshot's matching columns prepared for matching, as a JSON document
    (``rules.matching.SnapshotIndex.to_json``), kept for the content it was prepared from
    (``content_digest``: an md5 of those columns) and the rules that prepared it
    (``preparation``). Routing reads it instead of preparing the snapshot again while both are
    the same (docs/pipeline.md, "The prepared snapshot")."""

    __tablename__ = "apac_hubspot_prepared_snapshots"

    content_digest: Mapped[str] = mapped_column(Text, primary_key=True)
    preparation: Mapped[str] = mapped_column(Text, primary_key=True)
    document: Mapped[str] = mapped_column(Text, nullable=False)
    prepared_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )
