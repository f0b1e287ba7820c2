"""Each decision version names the day whose run decided it

A backfill that changes a decision lets the version it ends continue from the next day
written, so a version can start on a day without that day's run having decided it. A re-run
keeps a move, and the day keeps a retirement, only when the day's own run recorded it: that
is ``decided_for``, which a continuation keeps from the version it continues
(docs/decisions/0059). Existing versions are taken as decided for the day they start on,
which is what the code before this revision assumed of them.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06 16:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

TABLE = "apac_routing_decision_versions"


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("decided_for", sa.Text(), nullable=True))
    op.execute(f"UPDATE {TABLE} SET decided_for = valid_from")
    op.alter_column(TABLE, "decided_for", nullable=False)
    op.create_check_constraint(
        op.f(f"ck_{TABLE}_decided_before"), TABLE, "decided_for <= valid_from"
    )


def downgrade() -> None:
    op.drop_constraint(op.f(f"ck_{TABLE}_decided_before"), TABLE, type_="check")
    op.drop_column(TABLE, "decided_for")
