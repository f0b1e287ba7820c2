"""HubSpot webhook events say what became of them: ``outcome`` (what applying did, or why the
event was ignored), and the pending events are found by a partial index (the deal worker's
sensor asks for them every half minute; docs/hubspot-webhooks.md)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-04 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("hubspot_webhook_events", sa.Column("outcome", sa.Text(), nullable=True))
    op.create_index(
        "ix_hubspot_webhook_events_pending",
        "hubspot_webhook_events",
        ["subscriptionId", "id"],
        unique=False,
        postgresql_where=sa.text("status = 'pending'"),
    )


def downgrade() -> None:
    op.drop_index(
        "ix_hubspot_webhook_events_pending",
        table_name="hubspot_webhook_events",
        postgresql_where=sa.text("status = 'pending'"),
    )
    op.drop_column("hubspot_webhook_events", "outcome")
