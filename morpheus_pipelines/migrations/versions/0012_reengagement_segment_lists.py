"""Re-engagement segment lists: the HubSpot contact list behind each re-engagement segment of a
subscription, one per segment (``(subscriptionId, segment)`` is UNIQUE), set with
``morpheus segment set`` (docs/ownership.md, "Setting up a portal")

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 02:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

# The values of ReengagementSegment when this revision was written; a later segment widens
# the CHECK in its own revision.
SEGMENTS = (
    "email_click",
    "supplier",
    "no_show",
    "lost_deal",
    "campaign_target",
    "dialer_call_ended",
)


def upgrade() -> None:
    op.create_table(
        "reengagement_segment_lists",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("subscriptionId", sa.UUID(), nullable=False),
        sa.Column("segment", sa.Text(), nullable=False),
        sa.Column("hubspotListId", sa.Text(), nullable=False),
        sa.Column(
            "createdAt", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column(
            "updatedAt", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.CheckConstraint(
            "segment IN ({})".format(", ".join(f"'{segment}'" for segment in SEGMENTS)),
            name=op.f("ck_reengagement_segment_lists_known_segment"),
        ),
        sa.ForeignKeyConstraint(
            ["subscriptionId"],
            ["subscriptions.id"],
            name=op.f("fk_reengagement_segment_lists_subscriptionId_subscriptions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reengagement_segment_lists")),
        sa.UniqueConstraint(
            "subscriptionId",
            "segment",
            name=op.f("uq_reengagement_segment_lists_subscriptionId_segment"),
        ),
    )
    op.create_index(
        op.f("ix_reengagement_segment_lists_subscriptionId"),
        "reengagement_segment_lists",
        ["subscriptionId"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(
        op.f("ix_reengagement_segment_lists_subscriptionId"),
        table_name="reengagement_segment_lists",
    )
    op.drop_table("reengagement_segment_lists")
