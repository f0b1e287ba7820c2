"""The rep whose first touch met or missed a lead's deadline (docs/ownership.md, "First-touch
SLA"): a missed lead is re-routed, so its owner afterwards is not the rep who missed it

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04 05:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("leads", sa.Column("firstTouchSalesRepId", sa.BigInteger(), nullable=True))
    op.create_foreign_key(
        op.f("fk_leads_firstTouchSalesRepId_sales_reps"),
        "leads",
        "sales_reps",
        ["firstTouchSalesRepId"],
        ["id"],
    )


def downgrade() -> None:
    op.drop_constraint(
        op.f("fk_leads_firstTouchSalesRepId_sales_reps"), "leads", type_="foreignkey"
    )
    op.drop_column("leads", "firstTouchSalesRepId")
