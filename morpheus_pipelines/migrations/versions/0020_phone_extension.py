"""Contact data as libphonenumber reads it (docs/leads.md, "Contact data"): a lead's phone
number is stored in E.164 and its extension beside it

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-04 18:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("leads", sa.Column("phoneExtension", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("leads", "phoneExtension")
