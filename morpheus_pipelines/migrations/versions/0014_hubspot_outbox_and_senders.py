"""The HubSpot outbox (docs/hubspot-outbox.md) and a subscription's settings: its default
phone region, its fallback rep and the ids its senders (a Facebook page, a WhatsApp number, a
Google Ads lead-form key) pick it by

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04 04:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_SENDER_IDS = ("metaPageId", "whatsappPhoneNumberId", "googleAdsKeyHash")


def upgrade() -> None:
    op.add_column("subscriptions", sa.Column("defaultRegion", sa.Text(), nullable=True))
    op.add_column("subscriptions", sa.Column("fallbackSalesRepId", sa.BigInteger(), nullable=True))
    op.create_foreign_key(
        "fk_subscriptions_fallbackSalesRepId",
        "subscriptions",
        "sales_reps",
        ["fallbackSalesRepId"],
        ["id"],
    )
    for column in _SENDER_IDS:
        op.add_column("subscriptions", sa.Column(column, sa.Text(), nullable=True))
        op.create_unique_constraint(op.f(f"uq_subscriptions_{column}"), "subscriptions", [column])
    op.create_table(
        "hubspot_outbox",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("subscriptionId", sa.UUID(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("intentKey", sa.Text(), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("leadId", sa.UUID(), nullable=True),
        sa.Column("followUpTaskId", sa.BigInteger(), nullable=True),
        sa.Column("activityId", sa.BigInteger(), nullable=True),
        sa.Column("salesRepId", sa.BigInteger(), nullable=True),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "nextAttemptAt",
            sa.DateTime(timezone=True),
            server_default=sa.func.now(),
            nullable=False,
        ),
        sa.Column("lastError", sa.Text(), nullable=True),
        sa.Column("hubspotObjectId", sa.Text(), nullable=True),
        sa.Column(
            "createdAt", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("doneAt", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'done', 'dead')", name=op.f("ck_hubspot_outbox_known_status")
        ),
        sa.CheckConstraint(
            "kind IN ('contact', 'contact_owner', 'task', 'call', 'call_list', 'rep_list')",
            name=op.f("ck_hubspot_outbox_known_kind"),
        ),
        sa.CheckConstraint("attempts >= 0", name=op.f("ck_hubspot_outbox_attempts_not_negative")),
        sa.ForeignKeyConstraint(
            ["subscriptionId"],
            ["subscriptions.id"],
            name=op.f("fk_hubspot_outbox_subscriptionId_subscriptions"),
        ),
        sa.ForeignKeyConstraint(
            ["leadId"], ["leads.id"], name=op.f("fk_hubspot_outbox_leadId_leads")
        ),
        sa.ForeignKeyConstraint(
            ["followUpTaskId"],
            ["follow_up_tasks.id"],
            name=op.f("fk_hubspot_outbox_followUpTaskId_follow_up_tasks"),
        ),
        sa.ForeignKeyConstraint(
            ["activityId"], ["activities.id"], name=op.f("fk_hubspot_outbox_activityId_activities")
        ),
        sa.ForeignKeyConstraint(
            ["salesRepId"], ["sales_reps.id"], name=op.f("fk_hubspot_outbox_salesRepId_sales_reps")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hubspot_outbox")),
        sa.UniqueConstraint(
            "subscriptionId", "intentKey", name=op.f("uq_hubspot_outbox_subscriptionId_intentKey")
        ),
    )
    op.create_index(
        "ix_hubspot_outbox_due",
        "hubspot_outbox",
        ["nextAttemptAt", "id"],
        unique=False,
        postgresql_where=sa.text("status = 'pending'"),
    )
    op.create_index(
        op.f("ix_hubspot_outbox_status_subscriptionId"),
        "hubspot_outbox",
        ["status", "subscriptionId"],
        unique=False,
    )

    op.create_index(
        op.f("ix_activities_subscriptionId_hubspotEngagementId"),
        "activities",
        ["subscriptionId", "hubspotEngagementId"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_activities_subscriptionId_hubspotEngagementId"), table_name="activities")
    op.drop_index(op.f("ix_hubspot_outbox_status_subscriptionId"), table_name="hubspot_outbox")
    op.drop_index("ix_hubspot_outbox_due", table_name="hubspot_outbox")
    op.drop_table("hubspot_outbox")
    for column in reversed(_SENDER_IDS):
        op.drop_constraint(op.f(f"uq_subscriptions_{column}"), "subscriptions", type_="unique")
        op.drop_column("subscriptions", column)
    op.drop_constraint("fk_subscriptions_fallbackSalesRepId", "subscriptions", type_="foreignkey")
    op.drop_column("subscriptions", "fallbackSalesRepId")
    op.drop_column("subscriptions", "defaultRegion")
