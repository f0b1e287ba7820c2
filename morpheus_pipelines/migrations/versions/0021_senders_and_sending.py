"""Senders and sending (docs/messages.md, docs/leads.md "Senders"): outbound messages carry
their attempts, the provider's id and each status's time; a lead may be a sender's test
delivery; a lead whose contact fields its sender keeps (Meta Lead Ads) has a retrieval

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-04 19:05:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

_OLD_STATUSES = "'queued', 'sent', 'failed', 'cancelled'"
_STATUSES = "'queued', 'sending', 'sent', 'delivered', 'read', 'failed', 'cancelled'"
_TIMES = ("sendingAt", "sentAt", "deliveredAt", "readAt", "failedAt")


def upgrade() -> None:
    op.add_column(
        "outbound_messages",
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
    )
    op.add_column(
        "outbound_messages",
        sa.Column("nextAttemptAt", sa.DateTime(timezone=True), server_default=sa.text("now()")),
    )
    op.add_column("outbound_messages", sa.Column("providerMessageId", sa.Text(), nullable=True))
    for column in _TIMES:
        op.add_column(
            "outbound_messages", sa.Column(column, sa.DateTime(timezone=True), nullable=True)
        )
    op.add_column("outbound_messages", sa.Column("failureReason", sa.Text(), nullable=True))
    op.add_column("outbound_messages", sa.Column("failureCode", sa.Text(), nullable=True))
    op.create_unique_constraint(
        op.f("uq_outbound_messages_providerMessageId"), "outbound_messages", ["providerMessageId"]
    )
    op.create_index(
        "ix_outbound_messages_due",
        "outbound_messages",
        ["nextAttemptAt"],
        postgresql_where=sa.text("status = 'queued'"),
    )
    op.drop_constraint(op.f("ck_outbound_messages_known_status"), "outbound_messages")
    op.create_check_constraint(
        op.f("ck_outbound_messages_known_status"), "outbound_messages", f"status IN ({_STATUSES})"
    )
    op.add_column(
        "leads", sa.Column("isTest", sa.Boolean(), server_default="false", nullable=False)
    )
    op.create_index(op.f("ix_leads_subscriptionId_phone"), "leads", ["subscriptionId", "phone"])
    op.create_table(
        "lead_contact_retrievals",
        sa.Column("leadId", sa.UUID(), nullable=False),
        sa.Column("subscriptionId", sa.UUID(), nullable=False),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("externalId", sa.Text(), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "nextAttemptAt",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("completedAt", sa.DateTime(timezone=True), nullable=True),
        sa.Column("failedAt", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lastError", sa.Text(), nullable=True),
        sa.Column(
            "createdAt", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.ForeignKeyConstraint(
            ["leadId"], ["leads.id"], name=op.f("fk_lead_contact_retrievals_leadId_leads")
        ),
        sa.ForeignKeyConstraint(
            ["subscriptionId"],
            ["subscriptions.id"],
            name=op.f("fk_lead_contact_retrievals_subscriptionId_subscriptions"),
        ),
        sa.PrimaryKeyConstraint("leadId", name=op.f("pk_lead_contact_retrievals")),
    )
    op.create_index(
        op.f("ix_lead_contact_retrievals_subscriptionId"),
        "lead_contact_retrievals",
        ["subscriptionId"],
    )
    op.create_index(
        "ix_lead_contact_retrievals_due",
        "lead_contact_retrievals",
        ["nextAttemptAt"],
        postgresql_where=sa.text('"completedAt" IS NULL AND "failedAt" IS NULL'),
    )


def downgrade() -> None:
    op.drop_index("ix_lead_contact_retrievals_due", table_name="lead_contact_retrievals")
    op.drop_index(
        op.f("ix_lead_contact_retrievals_subscriptionId"), table_name="lead_contact_retrievals"
    )
    op.drop_table("lead_contact_retrievals")
    op.drop_index(op.f("ix_leads_subscriptionId_phone"), table_name="leads")
    op.drop_column("leads", "isTest")
    op.drop_constraint(op.f("ck_outbound_messages_known_status"), "outbound_messages")
    op.execute(
        "UPDATE outbound_messages SET status = CASE status WHEN 'sending' THEN 'queued' "
        "WHEN 'delivered' THEN 'sent' WHEN 'read' THEN 'sent' ELSE status END"
    )
    op.create_check_constraint(
        op.f("ck_outbound_messages_known_status"),
        "outbound_messages",
        f"status IN ({_OLD_STATUSES})",
    )
    op.drop_index("ix_outbound_messages_due", table_name="outbound_messages")
    op.drop_constraint(
        op.f("uq_outbound_messages_providerMessageId"), "outbound_messages", type_="unique"
    )
    for column in ("failureCode", "failureReason", *reversed(_TIMES), "providerMessageId"):
        op.drop_column("outbound_messages", column)
    op.drop_column("outbound_messages", "nextAttemptAt")
    op.drop_column("outbound_messages", "attempts")
