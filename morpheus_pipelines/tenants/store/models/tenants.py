"""Tenant tables: the per-partition staging of candidates and enrichment, the two mutually
exclusive bucket tables (docs/pipeline.md), and the routing decision record."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Index,
    Integer,
    Numeric,
    Text,
    func,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from morpheus_pipelines.platform.store.model_base import Base, WrittenDay, day_view
from morpheus_pipelines.tenants.rules.vocabulary import (
    Bucket,
    MatchMethod,
    Priority,
    SnapshotStatus,
    SourceType,
    values,
)

# Candidate, answer and decision versions are numbered by what their readers read of them,
# from one sequence (created by migration 0030; day_tables.CANDIDATE_VERSIONS): a routing
# input names the candidate and answer versions it was decided from, a score the candidate,
# answer and decision versions it was computed from.
VERSION_NUMBERS = "apac_tenant_version_numbers"
VERSION_NUMBER = text(f"nextval('{VERSION_NUMBERS}')")

SOURCE_TYPES = values(SourceType)
MATCH_METHODS = values(MatchMethod)
PRIORITIES = values(Priority)
# What enrichment produces per tenant, stored per partition and carried onto the bucket rows.
ENRICHMENT_COLUMNS = (
    "email_domain",
    "email_domain_class",
    "official_website",
    "company_name",
    "industry",
    "employee_count",
    "country",
    "enrichment_status",
    "enrichment_error_count",
)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IS NULL OR {column} IN ({', '.join(repr(v) for v in values)})"


class TenantCandidateVersion(Base):
    """A tenant's candidate row, valid for the days ``[valid_from, valid_to)`` (open while
    ``valid_to`` is NULL): written when it changes, not every day (docs/data-layer.md,
    "Day-versioned tables")."""

    __tablename__ = "apac_tenant_candidate_versions"
    __table_args__ = (
        CheckConstraint(_in("source_type", SOURCE_TYPES), name="source_type"),
        CheckConstraint("valid_to IS NULL OR valid_to > valid_from", name="valid_range"),
        {"postgresql_with": {"fillfactor": 90}},
    )

    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_from: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_to: Mapped[str | None] = mapped_column(Text)
    source_type: Mapped[str] = mapped_column(Text, nullable=False)
    custom_id: Mapped[str | None] = mapped_column(Text)
    name: Mapped[str | None] = mapped_column(Text)
    email: Mapped[str | None] = mapped_column(Text)
    sales_owner_email: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str | None] = mapped_column(Text)
    plan: Mapped[str | None] = mapped_column(Text)
    seats: Mapped[int | None] = mapped_column(Integer)
    active_users_30d: Mapped[int | None] = mapped_column(Integer)
    signup_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_active_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    forced_sales_owned: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    rejection_reason: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    version_number: Mapped[int] = mapped_column(
        BigInteger, nullable=False, server_default=VERSION_NUMBER
    )


class TenantCandidateDay(WrittenDay, Base):
    """A day whose candidates were written: the days ``apac_tenant_candidates`` answers."""

    __tablename__ = "apac_tenant_candidate_days"


class TenantCandidate(Base):
    """A tenant selected for one partition (active candidate or that day's signup): the view
    ``apac_tenant_candidates`` over the versions valid on each written day. Read only."""

    __table__ = day_view(
        "apac_tenant_candidates", TenantCandidateVersion.__table__, hidden=("version_number",)
    )


class CandidateSelection(Base):
    """When and how a partition's candidates were last read from the source.

    ``selected_at`` bounds the activity timestamps the source could show (scoring treats
    activity after it as corrupt); ``tenant_limit`` marks a limited smoke-test selection, which
    never retires the tenants it left out (docs/partitions.md).
    """

    __tablename__ = "apac_candidate_selections"

    partition_key: Mapped[str] = mapped_column(Text, primary_key=True)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    selected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    tenant_limit: Mapped[int | None] = mapped_column(Integer)
    candidates: Mapped[int] = mapped_column(Integer, nullable=False)


class EnrichedTenantVersion(Base):
    """Enrichment of a candidate (email-domain class and Domain Intelligence), valid for the
    days ``[valid_from, valid_to)`` (open while ``valid_to`` is NULL): written when it
    changes, not every day (docs/data-layer.md, "Day-versioned tables")."""

    __tablename__ = "apac_enriched_tenant_versions"

    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_from: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_to: Mapped[str | None] = mapped_column(Text)
    email_domain: Mapped[str | None] = mapped_column(Text)
    email_domain_class: Mapped[str | None] = mapped_column(Text)
    official_website: Mapped[str | None] = mapped_column(Text)
    company_name: Mapped[str | None] = mapped_column(Text)
    industry: Mapped[str | None] = mapped_column(Text)
    employee_count: Mapped[int | None] = mapped_column(Integer)
    country: Mapped[str | None] = mapped_column(Text)
    enrichment_status: Mapped[str] = mapped_column(Text, nullable=False)
    enrichment_error_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    enrichment_ms: Mapped[int | None] = mapped_column(Integer)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    # When Domain Intelligence gave this answer, and a hash of what it was asked (docs/
    # pipeline.md, "Enrichment reuse"): an answer is reused while both still hold.
    enriched_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    input_fingerprint: Mapped[str | None] = mapped_column(Text)
    version_number: Mapped[int] = mapped_column(
        BigInteger, nullable=False, server_default=VERSION_NUMBER
    )

    __table_args__ = (
        CheckConstraint("valid_to IS NULL OR valid_to > valid_from", name="valid_range"),
        Index(
            "ix_apac_enriched_tenant_versions_reuse",
            "tenant_id",
            text("enriched_at DESC"),
            postgresql_where=text("enrichment_status IN ('enriched', 'not_found')"),
        ),
        {"postgresql_with": {"fillfactor": 90}},
    )


class EnrichedTenantDay(WrittenDay, Base):
    """A day whose enrichment was written: the days ``apac_enriched_tenants`` answers."""

    __tablename__ = "apac_enriched_tenant_days"


class EnrichedTenant(Base):
    """Enrichment of one partition's candidate: the view ``apac_enriched_tenants`` over the
    versions valid on each written day. Read only."""

    __table__ = day_view(
        "apac_enriched_tenants", EnrichedTenantVersion.__table__, hidden=("version_number",)
    )


class _TenantBucketColumns:
    """Columns shared by ``apac_active_tenants`` and ``apac_sales_owned_tenants``
    (docs/pipeline.md)."""

    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    custom_id: Mapped[str | None] = mapped_column(Text)
    name: Mapped[str | None] = mapped_column(Text)
    email: Mapped[str | None] = mapped_column(Text)
    sales_owner_email: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str | None] = mapped_column(Text)
    source_type: Mapped[str | None] = mapped_column(Text)
    signup_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    plan: Mapped[str | None] = mapped_column(Text)
    seats: Mapped[int | None] = mapped_column(Integer)
    active_users_30d: Mapped[int | None] = mapped_column(Integer)
    last_active_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # enrichment
    email_domain: Mapped[str | None] = mapped_column(Text)
    email_domain_class: Mapped[str | None] = mapped_column(Text)
    official_website: Mapped[str | None] = mapped_column(Text)
    company_name: Mapped[str | None] = mapped_column(Text)
    industry: Mapped[str | None] = mapped_column(Text)
    employee_count: Mapped[int | None] = mapped_column(Integer)
    country: Mapped[str | None] = mapped_column(Text)
    enrichment_status: Mapped[str | None] = mapped_column(Text)
    enrichment_error_count: Mapped[int | None] = mapped_column(Integer)
    # score
    total_score: Mapped[Decimal | None] = mapped_column(Numeric(6, 2))
    calculated_priority: Mapped[str | None] = mapped_column(Text)
    priority: Mapped[str | None] = mapped_column(Text)
    priority_override: Mapped[str | None] = mapped_column(Text)
    priority_reason: Mapped[str | None] = mapped_column(Text)
    scored_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # priority history, for "new and changed" in the Daily Summary (reads this table only)
    previous_priority: Mapped[str | None] = mapped_column(Text)
    priority_changed_partition: Mapped[str | None] = mapped_column(Text)
    # when and from where the tenant entered this bucket ('new' or the other bucket)
    bucket_entered_partition: Mapped[str | None] = mapped_column(Text)
    entered_from: Mapped[str | None] = mapped_column(Text)
    # manual tracking, carried across moves (docs/reliability.md)
    track_step: Mapped[str | None] = mapped_column(Text)
    track_update_time: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    startup_program: Mapped[str | None] = mapped_column(Text)
    # NULL while the tenant is selected; set when a live routing run no longer selects it (the
    # row and its tracking fields are kept; scoring and reports skip it). docs/pipeline.md
    retired_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # routing evidence
    hubspot_target: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    hubspot_company_id: Mapped[str | None] = mapped_column(Text)
    hubspot_match_method: Mapped[str | None] = mapped_column(Text)
    hubspot_snapshot_synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    hubspot_sync_id: Mapped[str | None] = mapped_column(Text)
    hubspot_snapshot_status: Mapped[str | None] = mapped_column(Text)
    routing_rule: Mapped[str | None] = mapped_column(Text)
    partition_key: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str | None] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False, server_default=func.now()
    )


# Half of each page kept free and no index on a score column: scoring's update of a bucket
# row then stays on its page, a HOT update (docs/decisions/0054).
BUCKET_FILL_FACTOR = 50


def _bucket_table_args(*extra: CheckConstraint) -> tuple:
    return (
        CheckConstraint(_in("source_type", SOURCE_TYPES), name="source_type"),
        CheckConstraint(_in("hubspot_match_method", MATCH_METHODS), name="match_method"),
        CheckConstraint(_in("calculated_priority", PRIORITIES), name="calculated_priority"),
        CheckConstraint(_in("priority", PRIORITIES), name="priority"),
        CheckConstraint(_in("priority_override", (Priority.P0.value,)), name="priority_override"),
        *extra,
        {"postgresql_with": {"fillfactor": BUCKET_FILL_FACTOR}},
    )


class ActiveTenant(_TenantBucketColumns, Base):
    """Tenants that reporting reads: the default bucket and HubSpot target accounts."""

    __tablename__ = "apac_active_tenants"
    __table_args__ = _bucket_table_args()


class SalesOwnedTenant(_TenantBucketColumns, Base):
    """Tenants owned by APAC Sales (and the forced ids); never read by reporting."""

    __tablename__ = "apac_sales_owned_tenants"
    # A HubSpot target account is always Active (docs/pipeline.md); the schema refuses anything
    # else.
    __table_args__ = _bucket_table_args(
        CheckConstraint("NOT hubspot_target", name="not_hubspot_target")
    )


class RoutingDecisionVersion(Base):
    """Why a tenant landed in its bucket, valid for the days ``[valid_from, valid_to)`` (open
    while ``valid_to`` is NULL): written when the decision changes, not every day
    (docs/data-layer.md, "Day-versioned tables"). ``run_id`` and ``decided_at`` are those of
    the run that wrote the version, ``decided_for`` the day it wrote it for."""

    __tablename__ = "apac_routing_decision_versions"

    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_from: Mapped[str] = mapped_column(Text, primary_key=True)
    valid_to: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    source_type: Mapped[str | None] = mapped_column(Text)
    tenant_bucket: Mapped[str | None] = mapped_column(Text)
    routing_rule: Mapped[str] = mapped_column(Text, nullable=False)
    hubspot_company_id: Mapped[str | None] = mapped_column(Text)
    hubspot_match_method: Mapped[str | None] = mapped_column(Text)
    ambiguous_match: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    ambiguous_key: Mapped[str | None] = mapped_column(Text)
    # The target company whose name or alias equals the tenant's name: logged for
    # investigation, never a match by itself (docs/pipeline.md).
    name_hint_company_id: Mapped[str | None] = mapped_column(Text)
    email_domain_class: Mapped[str | None] = mapped_column(Text)
    sales_owned_match: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    priority_override: Mapped[str | None] = mapped_column(Text)
    priority_reason: Mapped[str | None] = mapped_column(Text)
    moved: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    moved_from: Mapped[str | None] = mapped_column(Text)
    rejection_reason: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    # The day whose run decided it: ``valid_from``, except for a version a backfill let
    # continue from a later day, which keeps its original's (a move or retirement belongs to
    # that day only).
    decided_for: Mapped[str] = mapped_column(Text, nullable=False)
    # Numbers what scoring reads of the decision (``day_tables.DECISION_VERSIONS``).
    version_number: Mapped[int] = mapped_column(
        BigInteger, nullable=False, server_default=VERSION_NUMBER
    )

    __table_args__ = (
        CheckConstraint(_in("tenant_bucket", values(Bucket)), name="tenant_bucket"),
        CheckConstraint("valid_to IS NULL OR valid_to > valid_from", name="valid_range"),
        CheckConstraint("decided_for <= valid_from", name="decided_before"),
        {"postgresql_with": {"fillfactor": 90}},
    )


class RoutingDecisionDay(WrittenDay, Base):
    """A day routing wrote, and the HubSpot snapshot its run routed with: the same for every
    decision of the day, so it is kept once here, not in every version."""

    __tablename__ = "apac_routing_decision_days"

    # The run that last began the day.
    run_id: Mapped[str | None] = mapped_column(Text)
    snapshot_status: Mapped[str | None] = mapped_column(Text)
    hubspot_sync_id: Mapped[str | None] = mapped_column(Text)
    hubspot_snapshot_synced_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        CheckConstraint(_in("snapshot_status", values(SnapshotStatus)), name="snapshot_status"),
    )


class RoutingDecision(Base):
    """Why a tenant of a partition landed in its bucket: the view ``apac_routing_decisions``
    over the versions valid on each written day, with the day's snapshot evidence. Read
    only."""

    __table__ = day_view(
        "apac_routing_decisions",
        RoutingDecisionVersion.__table__,
        RoutingDecisionDay.__table__,
        hidden=("decided_for", "version_number"),
    )


class RoutingInput(Base):
    """What a tenant was last decided from by a live run (docs/pipeline.md, "Incremental
    routing"): the candidate and answer versions it was decided from, and the keys through
    which it consults the rules' inputs. Written in the transaction that writes its bucket
    row (a rejected candidate, which has none, gets a row too: its versions alone); removed
    when the tenant is retired. The next day copies the tenant's decision when neither
    changed."""

    __tablename__ = "apac_routing_inputs"

    tenant_id: Mapped[str] = mapped_column(Text, primary_key=True)
    # The live partition whose run wrote the bucket row from these inputs.
    partition_key: Mapped[str] = mapped_column(Text, nullable=False)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    # The candidate and answer versions (``version_number``) it was decided from; the
    # answer's is NULL when it had none. NULL candidate: decided again on the next day.
    candidate_version: Mapped[int | None] = mapped_column(BigInteger)
    answer_version: Mapped[int | None] = mapped_column(BigInteger)
    portal_key: Mapped[str | None] = mapped_column(Text)
    account_key: Mapped[str | None] = mapped_column(Text)
    email_root_key: Mapped[str | None] = mapped_column(Text)
    website_root_key: Mapped[str | None] = mapped_column(Text)
    name_key: Mapped[str | None] = mapped_column(Text)
    sales_key: Mapped[str | None] = mapped_column(Text)


class RoutingState(Base):
    """The rules' inputs a partition was routed with (``rules.routing_inputs``): the next
    partition compares its own with them to know which tenants to route again."""

    __tablename__ = "apac_routing_states"

    partition_key: Mapped[str] = mapped_column(Text, primary_key=True)
    run_id: Mapped[str] = mapped_column(Text, nullable=False)
    # The partition owned the live buckets when it was routed: only then do the bucket rows
    # hold its decisions, and only then may a later day carry them forward.
    live: Mapped[bool] = mapped_column(Boolean, nullable=False)
    regime: Mapped[str] = mapped_column(Text, nullable=False)
    digest: Mapped[str] = mapped_column(Text, nullable=False)
    # The answers per key; kept for the two newest partitions only (a re-run of the newest
    # needs the one before it). Stored uncompressed (STORAGE EXTERNAL, migration 0010):
    # compressing tens of MiB each day cost more than the space it saves on two rows.
    rule_inputs: Mapped[str | None] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
