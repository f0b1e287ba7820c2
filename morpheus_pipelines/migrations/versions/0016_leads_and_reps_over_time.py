"""Leads and reps over time (docs/leads.md, docs/ownership.md): a lead whose owner a person
chose (routing never moves it back), the moment its load stopped counting, a lead waiting for
an owner (no owner: nobody was assignable), its first-touch deadline; a rep's working hours,
time zone, away-until and cap on open leads; a pool's first-touch SLA

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04 05:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "leads",
        sa.Column("ownerSetByHand", sa.Boolean(), server_default="false", nullable=False),
    )
    op.add_column("leads", sa.Column("loadReleasedAt", sa.DateTime(timezone=True), nullable=True))
    op.add_column("leads", sa.Column("firstTouchDueAt", sa.DateTime(timezone=True), nullable=True))
    op.add_column("leads", sa.Column("firstTouchAt", sa.DateTime(timezone=True), nullable=True))
    op.add_column(
        "leads", sa.Column("firstTouchMissedAt", sa.DateTime(timezone=True), nullable=True)
    )
    # A lead waiting for an owner has none: no rep, no HubSpot owner.
    op.alter_column("leads", "ownerHubspotOwnerId", existing_type=sa.Text(), nullable=True)
    op.add_column("sales_reps", sa.Column("timeZone", sa.Text(), nullable=True))
    op.add_column(
        "sales_reps",
        sa.Column("workingHours", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
    )
    op.add_column("sales_reps", sa.Column("awayUntil", sa.DateTime(timezone=True), nullable=True))
    op.add_column("sales_reps", sa.Column("maxOpenLeads", sa.Integer(), nullable=True))
    op.create_check_constraint(
        op.f("ck_sales_reps_max_open_leads_not_negative"),
        "sales_reps",
        '"maxOpenLeads" IS NULL OR "maxOpenLeads" >= 0',
    )
    op.add_column("routing_pools", sa.Column("firstTouchSlaSeconds", sa.Integer(), nullable=True))
    op.create_check_constraint(
        op.f("ck_routing_pools_first_touch_sla_positive"),
        "routing_pools",
        '"firstTouchSlaSeconds" IS NULL OR "firstTouchSlaSeconds" > 0',
    )
    # The waiting leads of a subscription, and the open leads whose first touch is due.
    op.create_index(
        "ix_leads_waiting",
        "leads",
        ["subscriptionId", "createdAt"],
        postgresql_where=sa.text("\"ownerHubspotOwnerId\" IS NULL AND status = 'open'"),
    )
    op.create_index(
        "ix_leads_first_touch_due",
        "leads",
        ["firstTouchDueAt"],
        postgresql_where=sa.text(
            '"firstTouchDueAt" IS NOT NULL AND "firstTouchAt" IS NULL '
            'AND "firstTouchMissedAt" IS NULL'
        ),
    )


def downgrade() -> None:
    op.drop_index("ix_leads_first_touch_due", table_name="leads")
    op.drop_index("ix_leads_waiting", table_name="leads")
    op.drop_constraint(
        op.f("ck_routing_pools_first_touch_sla_positive"), "routing_pools", type_="check"
    )
    op.drop_column("routing_pools", "firstTouchSlaSeconds")
    op.drop_constraint(
        op.f("ck_sales_reps_max_open_leads_not_negative"), "sales_reps", type_="check"
    )
    for column in ("maxOpenLeads", "awayUntil", "workingHours", "timeZone"):
        op.drop_column("sales_reps", column)
    # Refused rather than losing leads: give the waiting leads an owner first.
    op.execute(
        'DO $$ BEGIN IF EXISTS (SELECT 1 FROM leads WHERE "ownerHubspotOwnerId" IS NULL) '
        "THEN RAISE EXCEPTION 'leads are waiting for an owner; assign them before downgrading'; "
        "END IF; END $$"
    )
    op.alter_column("leads", "ownerHubspotOwnerId", existing_type=sa.Text(), nullable=False)
    for column in (
        "firstTouchMissedAt",
        "firstTouchAt",
        "firstTouchDueAt",
        "loadReleasedAt",
        "ownerSetByHand",
    ):
        op.drop_column("leads", column)
