"""Publishable API keys for browser forms (docs/leads.md, "Browser forms"): a key may be
publishable, with the origins it may be used from; a publishable key has at least one, a
secret key none

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-04 19:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None

_CHECK = "ck_intake_api_keys_origins_of_publishable"


def upgrade() -> None:
    op.add_column(
        "intake_api_keys",
        sa.Column("publishable", sa.Boolean(), server_default="false", nullable=False),
    )
    op.add_column(
        "intake_api_keys",
        sa.Column(
            "allowedOrigins", postgresql.ARRAY(sa.Text()), server_default="{}", nullable=False
        ),
    )
    op.create_check_constraint(
        op.f(_CHECK), "intake_api_keys", 'publishable = (cardinality("allowedOrigins") > 0)'
    )


def downgrade() -> None:
    op.drop_constraint(op.f(_CHECK), "intake_api_keys", type_="check")
    op.drop_column("intake_api_keys", "allowedOrigins")
    op.drop_column("intake_api_keys", "publishable")
