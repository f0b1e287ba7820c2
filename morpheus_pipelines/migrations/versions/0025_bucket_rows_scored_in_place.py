"""Bucket rows scored in place: no index on ``priority``, and room on each page

Scoring writes the score columns of every bucket row on a first day and of the recency movers
every day. With an index on ``priority`` no such update could be HOT (it changes an indexed
column), and with full pages the new row version went to another page: a new entry in every
index and the whole row in the WAL. Half of each page is kept free, so the new version stays
beside the old one (docs/decisions/0054). Existing rows keep their pages until rewritten.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06 05:10:00
"""

from __future__ import annotations

from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

BUCKET_TABLES = ("apac_active_tenants", "apac_sales_owned_tenants")
FILL_FACTOR = 50


def upgrade() -> None:
    for table in BUCKET_TABLES:
        op.drop_index(op.f(f"ix_{table}_priority"), table_name=table)
        op.execute(f"ALTER TABLE {table} SET (fillfactor = {FILL_FACTOR})")


def downgrade() -> None:
    for table in BUCKET_TABLES:
        op.execute(f"ALTER TABLE {table} RESET (fillfactor)")
        op.create_index(op.f(f"ix_{table}_priority"), table, ["priority"], unique=False)
