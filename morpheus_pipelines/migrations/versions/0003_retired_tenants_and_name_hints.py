"""retired tenants, candidate selections and company-name hints

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 21:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

BUCKET_TABLES = ("apac_active_tenants", "apac_sales_owned_tenants")


def upgrade() -> None:
    for table in BUCKET_TABLES:
        op.add_column(table, sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "apac_candidate_selections",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("selected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tenant_limit", sa.Integer(), nullable=True),
        sa.Column("candidates", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("partition_key", name=op.f("pk_apac_candidate_selections")),
    )
    op.add_column(
        "apac_routing_decisions", sa.Column("name_hint_company_id", sa.Text(), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("apac_routing_decisions", "name_hint_company_id")
    op.drop_table("apac_candidate_selections")
    for table in BUCKET_TABLES:
        op.drop_column(table, "retired_at")
