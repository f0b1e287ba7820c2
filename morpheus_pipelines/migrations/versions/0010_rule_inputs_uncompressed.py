"""rule inputs stored uncompressed: ``apac_routing_states.rule_inputs`` (tens of MiB of JSON
a day, kept for the two newest partitions only) is written out of line without pglz, which
cost most of writing it (docs/decisions/0033)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 08:40:00
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Applies to values written from now on; the two stored ones stay compressed.
    op.execute("ALTER TABLE apac_routing_states ALTER COLUMN rule_inputs SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.execute("ALTER TABLE apac_routing_states ALTER COLUMN rule_inputs SET STORAGE EXTENDED")
