"""Routing decisions stored once per change: versions valid for a range of days

As 0026 and 0027 did for the candidates and the answers: ``apac_routing_decisions`` becomes
the view over ``apac_routing_decision_versions`` and ``apac_routing_decision_days``
(docs/decisions/0058). The snapshot a run routed with is the same for every decision of its
day, so it moves to the days table, and a decision carried unchanged to the next day is no
longer a change. The existing rows are written day by day, so equal decisions of consecutive
days become one version; each day keeps the evidence of its newest decision.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-06 14:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.day_versions import DayVersions, write_days_from

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None

COMPARED = (
    "source_type",
    "tenant_bucket",
    "routing_rule",
    "hubspot_company_id",
    "hubspot_match_method",
    "ambiguous_match",
    "ambiguous_key",
    "name_hint_company_id",
    "email_domain_class",
    "sales_owned_match",
    "priority_override",
    "priority_reason",
    "moved",
    "moved_from",
    "rejection_reason",
)
# Written with a new version, not a change on their own.
CARRIED = ("run_id", "decided_at")
EVIDENCE = ("snapshot_status", "hubspot_sync_id", "hubspot_snapshot_synced_at")
FILL_FACTOR = 90
SNAPSHOT_STATUS = "snapshot_status IS NULL OR snapshot_status IN ('fresh', 'stale', 'unavailable')"
TENANT_BUCKET = "tenant_bucket IS NULL OR tenant_bucket IN ('active', 'sales_owned')"


def _decision_columns() -> list[sa.Column]:
    return [
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("source_type", sa.Text(), nullable=True),
        sa.Column("tenant_bucket", sa.Text(), nullable=True),
        sa.Column("routing_rule", sa.Text(), nullable=False),
        sa.Column("hubspot_company_id", sa.Text(), nullable=True),
        sa.Column("hubspot_match_method", sa.Text(), nullable=True),
        sa.Column("ambiguous_match", sa.Boolean(), nullable=False),
        sa.Column("ambiguous_key", sa.Text(), nullable=True),
        sa.Column("name_hint_company_id", sa.Text(), nullable=True),
        sa.Column("email_domain_class", sa.Text(), nullable=True),
        sa.Column("sales_owned_match", sa.Boolean(), nullable=False),
        sa.Column("priority_override", sa.Text(), nullable=True),
        sa.Column("priority_reason", sa.Text(), nullable=True),
        sa.Column("moved", sa.Boolean(), nullable=False),
        sa.Column("moved_from", sa.Text(), nullable=True),
        sa.Column("rejection_reason", sa.Text(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
    ]


def _evidence_columns(nullable: bool) -> list[sa.Column]:
    return [
        sa.Column("snapshot_status", sa.Text(), nullable=nullable),
        sa.Column("hubspot_sync_id", sa.Text(), nullable=True),
        sa.Column("hubspot_snapshot_synced_at", sa.DateTime(timezone=True), nullable=True),
    ]


def _move_rows() -> None:
    """Every stored day into versions, as the pipeline writes them (``write_days_from``), and
    each day's evidence from its newest decision."""
    session = Session(bind=op.get_bind())
    table = DayVersions(
        versions="apac_routing_decision_versions",
        days="apac_routing_decision_days",
        key="tenant_id",
        compared=COMPARED,
        carried=CARRIED,
    )
    days = session.scalars(
        sa.text("SELECT DISTINCT partition_key FROM apac_routing_decisions")
    ).all()
    write_days_from(session, table, rows_table="apac_routing_decisions", days=list(days))
    session.execute(
        sa.text(
            "UPDATE apac_routing_decision_days d SET run_id = n.run_id, "
            "snapshot_status = n.snapshot_status, hubspot_sync_id = n.hubspot_sync_id, "
            "hubspot_snapshot_synced_at = n.hubspot_snapshot_synced_at FROM "
            "(SELECT DISTINCT ON (partition_key) * FROM apac_routing_decisions "
            "ORDER BY partition_key, decided_at DESC, tenant_id) n "
            "WHERE n.partition_key = d.partition_key"
        )
    )


def upgrade() -> None:
    op.create_table(
        "apac_routing_decision_days",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("complete", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        *_evidence_columns(nullable=True),
        sa.CheckConstraint(
            SNAPSHOT_STATUS, name=op.f("ck_apac_routing_decision_days_snapshot_status")
        ),
        sa.PrimaryKeyConstraint("partition_key", name=op.f("pk_apac_routing_decision_days")),
    )
    op.create_table(
        "apac_routing_decision_versions",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("valid_from", sa.Text(), nullable=False),
        sa.Column("valid_to", sa.Text(), nullable=True),
        *_decision_columns(),
        sa.CheckConstraint(
            TENANT_BUCKET, name=op.f("ck_apac_routing_decision_versions_tenant_bucket")
        ),
        sa.CheckConstraint(
            "valid_to IS NULL OR valid_to > valid_from",
            name=op.f("ck_apac_routing_decision_versions_valid_range"),
        ),
        sa.PrimaryKeyConstraint(
            "tenant_id", "valid_from", name=op.f("pk_apac_routing_decision_versions")
        ),
        postgresql_with={"fillfactor": FILL_FACTOR},
    )
    _move_rows()
    op.drop_table("apac_routing_decisions")
    columns = ", ".join(f"v.{c.name}" for c in _decision_columns())
    op.execute(
        "CREATE VIEW apac_routing_decisions AS "
        f"SELECT d.partition_key, v.tenant_id, {columns}, "
        f"{', '.join(f'd.{c}' for c in EVIDENCE)} "
        "FROM apac_routing_decision_days d JOIN apac_routing_decision_versions v "
        "ON v.valid_from <= d.partition_key "
        "AND (v.valid_to IS NULL OR v.valid_to > d.partition_key) WHERE d.complete"
    )


def downgrade() -> None:
    op.execute("CREATE TABLE apac_routing_decisions_rows AS SELECT * FROM apac_routing_decisions")
    op.execute("DROP VIEW apac_routing_decisions")
    op.create_table(
        "apac_routing_decisions",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("tenant_id", sa.Text(), nullable=False),
        *_decision_columns(),
        *_evidence_columns(nullable=False),
        sa.CheckConstraint(SNAPSHOT_STATUS, name=op.f("ck_apac_routing_decisions_snapshot_status")),
        sa.CheckConstraint(TENANT_BUCKET, name=op.f("ck_apac_routing_decisions_tenant_bucket")),
        sa.PrimaryKeyConstraint(
            "partition_key", "tenant_id", name=op.f("pk_apac_routing_decisions")
        ),
    )
    op.execute("INSERT INTO apac_routing_decisions SELECT * FROM apac_routing_decisions_rows")
    op.execute("DROP TABLE apac_routing_decisions_rows")
    op.create_index(
        op.f("ix_apac_routing_decisions_run_id"), "apac_routing_decisions", ["run_id"], unique=False
    )
    op.drop_table("apac_routing_decision_versions")
    op.drop_table("apac_routing_decision_days")
