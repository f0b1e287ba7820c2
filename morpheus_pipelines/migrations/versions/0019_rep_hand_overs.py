"""A rep who leaves hands over (docs/ownership.md, "When a rep leaves"): the hand-overs with
what moved where, a rep marked as left by a person (the mirror keeps them inactive), and the
indexes that find a departing rep's open leads and live tasks

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04 15:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def _count(name: str) -> sa.Column:
    return sa.Column(name, sa.Integer(), server_default="0", nullable=False)


def upgrade() -> None:
    op.add_column("sales_reps", sa.Column("leftAt", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "rep_hand_overs",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("subscriptionId", sa.UUID(), nullable=False),
        sa.Column("salesRepId", sa.BigInteger(), nullable=False),
        sa.Column(
            "startedAt", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("finishedAt", sa.DateTime(timezone=True), nullable=True),
        _count("leadsRerouted"),
        _count("leadsToFallback"),
        _count("leadsWaiting"),
        _count("tasksMoved"),
        _count("tasksUnowned"),
        sa.Column(
            "moves",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default="{}",
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["salesRepId"], ["sales_reps.id"], name=op.f("fk_rep_hand_overs_salesRepId_sales_reps")
        ),
        sa.ForeignKeyConstraint(
            ["subscriptionId"],
            ["subscriptions.id"],
            name=op.f("fk_rep_hand_overs_subscriptionId_subscriptions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rep_hand_overs")),
    )
    op.create_index(
        op.f("ix_rep_hand_overs_subscriptionId_startedAt"),
        "rep_hand_overs",
        ["subscriptionId", "startedAt"],
    )
    op.create_index(
        "ix_leads_open_by_owner",
        "leads",
        ["ownerSalesRepId"],
        postgresql_where=sa.text("status = 'open'"),
    )
    op.create_index(
        "ix_follow_up_tasks_live_by_rep",
        "follow_up_tasks",
        ["salesRepId"],
        postgresql_where=sa.text("status IN ('PENDING', 'IN_PROGRESS')"),
    )


def downgrade() -> None:
    op.drop_index("ix_follow_up_tasks_live_by_rep", table_name="follow_up_tasks")
    op.drop_index("ix_leads_open_by_owner", table_name="leads")
    op.drop_index(op.f("ix_rep_hand_overs_subscriptionId_startedAt"), table_name="rep_hand_overs")
    op.drop_table("rep_hand_overs")
    op.drop_column("sales_reps", "leftAt")
