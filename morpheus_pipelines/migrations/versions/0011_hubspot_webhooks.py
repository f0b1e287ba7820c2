"""HubSpot webhooks: the portal each subscription answers for, the webhook events received
(each applied once: ``(portalId, eventId)`` is UNIQUE) and the lead's HubSpot contact
(docs/hubspot-webhooks.md)

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 02:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("subscriptions", sa.Column("hubspotPortalId", sa.BigInteger(), nullable=True))
    op.create_unique_constraint(
        op.f("uq_subscriptions_hubspotPortalId"), "subscriptions", ["hubspotPortalId"]
    )
    op.add_column("leads", sa.Column("hubspotContactId", sa.Text(), nullable=True))
    op.create_index(op.f("ix_leads_hubspotContactId"), "leads", ["hubspotContactId"], unique=False)
    op.create_table(
        "hubspot_webhook_events",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("subscriptionId", sa.UUID(), nullable=False),
        sa.Column("portalId", sa.BigInteger(), nullable=False),
        sa.Column("eventId", sa.BigInteger(), nullable=False),
        sa.Column("subscriptionType", sa.Text(), nullable=False),
        sa.Column("objectId", sa.BigInteger(), nullable=False),
        sa.Column("propertyName", sa.Text(), nullable=True),
        sa.Column("propertyValue", sa.Text(), nullable=True),
        sa.Column("occurredAt", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column(
            "receivedAt", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.Column("appliedAt", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('applied', 'pending', 'ignored')",
            name=op.f("ck_hubspot_webhook_events_known_status"),
        ),
        sa.ForeignKeyConstraint(
            ["subscriptionId"],
            ["subscriptions.id"],
            name=op.f("fk_hubspot_webhook_events_subscriptionId_subscriptions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hubspot_webhook_events")),
        sa.UniqueConstraint(
            "portalId", "eventId", name=op.f("uq_hubspot_webhook_events_portalId_eventId")
        ),
    )
    op.create_index(
        op.f("ix_hubspot_webhook_events_subscriptionId"),
        "hubspot_webhook_events",
        ["subscriptionId"],
        unique=False,
    )
    op.create_index(
        op.f("ix_hubspot_webhook_events_portalId_objectId"),
        "hubspot_webhook_events",
        ["portalId", "objectId"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(
        op.f("ix_hubspot_webhook_events_portalId_objectId"), table_name="hubspot_webhook_events"
    )
    op.drop_index(
        op.f("ix_hubspot_webhook_events_subscriptionId"), table_name="hubspot_webhook_events"
    )
    op.drop_table("hubspot_webhook_events")
    op.drop_index(op.f("ix_leads_hubspotContactId"), table_name="leads")
    op.drop_column("leads", "hubspotContactId")
    op.drop_constraint(op.f("uq_subscriptions_hubspotPortalId"), "subscriptions", type_="unique")
    op.drop_column("subscriptions", "hubspotPortalId")
