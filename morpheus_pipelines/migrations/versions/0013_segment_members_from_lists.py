"""Segment members read from HubSpot lists: ``reengagement_segment_members.hubspotListId`` (the
list a member was read from; NULL: an event such as the demo's) and ``leftListAt`` (when the
member was no longer on that list; such members are kept, never claimed) (docs/ownership.md)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 03:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "reengagement_segment_members", sa.Column("hubspotListId", sa.Text(), nullable=True)
    )
    op.add_column(
        "reengagement_segment_members",
        sa.Column("leftListAt", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("reengagement_segment_members", "leftListAt")
    op.drop_column("reengagement_segment_members", "hubspotListId")
