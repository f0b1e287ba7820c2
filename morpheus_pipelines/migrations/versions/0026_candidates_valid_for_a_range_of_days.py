"""Candidates stored once per change: versions valid for a range of days

``apac_tenant_candidates`` held one row per tenant and day, so every day copied every unchanged
candidate. Its rows become versions valid ``[valid_from, valid_to)`` in
``apac_tenant_candidate_versions``; ``apac_tenant_candidate_days`` lists the days written; a
view with the old name and columns answers each written day (docs/decisions/0057). The
existing rows are written day by day, so equal rows of consecutive days become one version.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06 10:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.day_versions import DayVersions, write_days_from

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None

VALUE_COLUMNS = (
    "source_type",
    "custom_id",
    "name",
    "email",
    "sales_owner_email",
    "status",
    "plan",
    "seats",
    "active_users_30d",
    "signup_at",
    "last_active_at",
    "forced_sales_owned",
    "rejection_reason",
    "run_id",
)
# Ending a version rewrites its row: room on the page keeps that update beside it (HOT).
# Written with a new version, not a change on their own.
CARRIED = ("run_id",)
FILL_FACTOR = 90


def _value_columns() -> list[sa.Column]:
    return [
        sa.Column("source_type", sa.Text(), nullable=False),
        sa.Column("custom_id", sa.Text(), nullable=True),
        sa.Column("name", sa.Text(), nullable=True),
        sa.Column("email", sa.Text(), nullable=True),
        sa.Column("sales_owner_email", sa.Text(), nullable=True),
        sa.Column("status", sa.Text(), nullable=True),
        sa.Column("plan", sa.Text(), nullable=True),
        sa.Column("seats", sa.Integer(), nullable=True),
        sa.Column("active_users_30d", sa.Integer(), nullable=True),
        sa.Column("signup_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_active_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("forced_sales_owned", sa.Boolean(), nullable=False),
        sa.Column("rejection_reason", sa.Text(), nullable=True),
        sa.Column("run_id", sa.Text(), nullable=False),
    ]


def _view() -> str:
    values = ", ".join(f"v.{c}" for c in VALUE_COLUMNS)
    return (
        "CREATE VIEW apac_tenant_candidates AS "
        f"SELECT d.partition_key, v.tenant_id, {values} "
        "FROM apac_tenant_candidate_days d JOIN apac_tenant_candidate_versions v "
        "ON v.valid_from <= d.partition_key "
        "AND (v.valid_to IS NULL OR v.valid_to > d.partition_key) WHERE d.complete"
    )


def _move_rows() -> None:
    """Every stored day into versions, as the pipeline writes them (``write_days_from``)."""
    session = Session(bind=op.get_bind())
    table = DayVersions(
        versions="apac_tenant_candidate_versions",
        days="apac_tenant_candidate_days",
        key="tenant_id",
        compared=tuple(c for c in VALUE_COLUMNS if c not in CARRIED),
        carried=CARRIED,
    )
    days = session.scalars(
        sa.text(
            "SELECT partition_key FROM apac_candidate_selections "
            "UNION SELECT partition_key FROM apac_tenant_candidates"
        )
    ).all()
    write_days_from(session, table, rows_table="apac_tenant_candidates", days=list(days))


def upgrade() -> None:
    op.create_table(
        "apac_tenant_candidate_days",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("complete", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.PrimaryKeyConstraint("partition_key", name=op.f("pk_apac_tenant_candidate_days")),
    )
    op.create_table(
        "apac_tenant_candidate_versions",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("valid_from", sa.Text(), nullable=False),
        sa.Column("valid_to", sa.Text(), nullable=True),
        *_value_columns(),
        sa.CheckConstraint(
            "source_type IS NULL OR source_type IN ('active', 'signup')",
            name=op.f("ck_apac_tenant_candidate_versions_source_type"),
        ),
        sa.CheckConstraint(
            "valid_to IS NULL OR valid_to > valid_from",
            name=op.f("ck_apac_tenant_candidate_versions_valid_range"),
        ),
        sa.PrimaryKeyConstraint(
            "tenant_id", "valid_from", name=op.f("pk_apac_tenant_candidate_versions")
        ),
        postgresql_with={"fillfactor": FILL_FACTOR},
    )
    _move_rows()
    op.drop_table("apac_tenant_candidates")
    op.execute(_view())


def downgrade() -> None:
    op.execute("CREATE TABLE apac_tenant_candidates_rows AS SELECT * FROM apac_tenant_candidates")
    op.execute("DROP VIEW apac_tenant_candidates")
    op.create_table(
        "apac_tenant_candidates",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("tenant_id", sa.Text(), nullable=False),
        *_value_columns(),
        sa.CheckConstraint(
            "source_type IS NULL OR source_type IN ('active', 'signup')",
            name=op.f("ck_apac_tenant_candidates_source_type"),
        ),
        sa.PrimaryKeyConstraint(
            "partition_key", "tenant_id", name=op.f("pk_apac_tenant_candidates")
        ),
    )
    op.execute("INSERT INTO apac_tenant_candidates SELECT * FROM apac_tenant_candidates_rows")
    op.execute("DROP TABLE apac_tenant_candidates_rows")
    op.drop_table("apac_tenant_candidate_versions")
    op.drop_table("apac_tenant_candidate_days")
