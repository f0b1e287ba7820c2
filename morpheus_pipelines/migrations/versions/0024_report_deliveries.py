"""Report deliveries: each report of each partition sent once per reader and channel
(docs/reports.md, "Delivery"); the UNIQUE key is what a re-run claims against

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-04 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "report_deliveries",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("report", sa.Text(), nullable=False),
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("channel", sa.Text(), nullable=False),
        sa.Column("recipient", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("retryable", sa.Boolean(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("message_id", sa.Text(), nullable=True),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_report_deliveries")),
        sa.UniqueConstraint(
            "report",
            "partition_key",
            "channel",
            "recipient",
            name=op.f("uq_report_deliveries_report_partition_key_channel_recipient"),
        ),
    )


def downgrade() -> None:
    op.drop_table("report_deliveries")
