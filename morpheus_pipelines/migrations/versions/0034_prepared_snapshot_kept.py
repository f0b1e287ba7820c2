"""The HubSpot snapshot kept as routing prepared it for matching

Routing turns the target-account snapshot into hash look-ups of its ids, domain roots and
names before it matches a tenant, which took most of a quiet day's routing at 100,000
tenants. ``apac_hubspot_prepared_snapshots`` keeps the look-ups as a JSON document, under an
md5 of the snapshot's matching columns and the rules that prepared them, so a run whose
snapshot did not change reads the document instead (docs/decisions/0072). Nothing is carried
over: the first run after this revision prepares the snapshot and keeps it.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-07 21:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "apac_hubspot_prepared_snapshots",
        sa.Column("content_digest", sa.Text(), nullable=False),
        sa.Column("preparation", sa.Text(), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column(
            "prepared_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint(
            "content_digest", "preparation", name=op.f("pk_apac_hubspot_prepared_snapshots")
        ),
    )
    # Stored out of line uncompressed: compressing a few MiB of JSON took the server several
    # times as long as writing and reading it whole.
    op.execute(
        "ALTER TABLE apac_hubspot_prepared_snapshots ALTER COLUMN document SET STORAGE EXTERNAL"
    )


def downgrade() -> None:
    op.drop_table("apac_hubspot_prepared_snapshots")
