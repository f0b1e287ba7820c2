"""One spelling of an activity's direction, the engagement index owned here, and WhatsApp
template rules free of the window

``activities.direction`` was written ``'OUTBOUND'`` by the AI dialer's calls and
``'inbound'``/``'outbound'`` by everyone else: one value in two spellings, of which every
query matched only one. The rows are lower-cased and a CHECK keeps them so.

The partial index ``ix_activities_lead_engagement`` is rebuilt here, its predicate naming
the AI dialer's HubSpot owner id as this revision knows it, so that revision 0007, applied
to existing databases, stays as it was (docs/decisions/0048-ai-owner-id-in-migrations.md).

Only a free-form WhatsApp message is bound to the 24-hour window: a WhatsApp *template* rule
no longer has to name ``windowLeadSeconds``.

``lead_duplicates.duplicateOfLeadId``: the earlier open lead of the subscription a new lead
duplicates (docs/leads.md, "Duplicates").

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 06:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

# The AI dialer's HubSpot owner id ("not a human") as of this revision; a later change of the
# product's constant is a later migration, never an edit of this one.
AI_DIALER_OWNER_ID = "86817215"
ENGAGEMENT_PREDICATE = (
    "direction = 'inbound' OR (type = 'CALL' AND direction = 'outbound' AND "
    f"(metadata ->> 'hubspot_owner_id') IS DISTINCT FROM '{AI_DIALER_OWNER_ID}')"
)
DIRECTION_CHECK = "direction IS NULL OR direction IN ('inbound', 'outbound')"
WINDOW_LEAD = "ck_automation_rules_window_lead_for_whatsapp_only"
WINDOW_LEAD_CHECK = (
    "(channel = 'WHATSAPP' OR \"windowLeadSeconds\" IS NULL) AND "
    "(channel <> 'WHATSAPP' OR kind <> 'free_form' OR \"windowLeadSeconds\" IS NOT NULL)"
)
WINDOW_LEAD_CHECK_0007 = "(channel = 'WHATSAPP') = (\"windowLeadSeconds\" IS NOT NULL)"


def upgrade() -> None:
    op.execute(
        "UPDATE activities SET direction = lower(direction) "
        "WHERE direction IS DISTINCT FROM lower(direction)"
    )
    # A value that is neither direction stops the upgrade (the CHECK refuses it) rather than
    # being dropped: nothing is lost silently.
    op.create_check_constraint(
        op.f("ck_activities_known_direction"), "activities", sa.text(DIRECTION_CHECK)
    )
    op.drop_index("ix_activities_lead_engagement", table_name="activities")
    op.create_index(
        "ix_activities_lead_engagement",
        "activities",
        ["leadId", "occurredAt"],
        unique=False,
        postgresql_where=sa.text(ENGAGEMENT_PREDICATE),
    )
    op.drop_constraint(op.f(WINDOW_LEAD), "automation_rules", type_="check")
    op.create_check_constraint(op.f(WINDOW_LEAD), "automation_rules", sa.text(WINDOW_LEAD_CHECK))
    op.add_column(
        "lead_duplicates",
        sa.Column("duplicateOfLeadId", sa.UUID(), nullable=True),
    )
    op.create_foreign_key(
        op.f("fk_lead_duplicates_duplicateOfLeadId_leads"),
        "lead_duplicates",
        "leads",
        ["duplicateOfLeadId"],
        ["id"],
    )
    op.create_index(
        op.f("ix_lead_duplicates_duplicateOfLeadId"),
        "lead_duplicates",
        ["duplicateOfLeadId"],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_lead_duplicates_duplicateOfLeadId"), table_name="lead_duplicates")
    op.drop_constraint(
        op.f("fk_lead_duplicates_duplicateOfLeadId_leads"), "lead_duplicates", type_="foreignkey"
    )
    op.drop_column("lead_duplicates", "duplicateOfLeadId")
    # The index is the same either way; the lower-cased rows stay lower-cased (every reader
    # of this revision's predecessors matched the lower-case spelling).
    op.drop_constraint(op.f("ck_activities_known_direction"), "activities", type_="check")
    # A WhatsApp template rule without a window lead stops the downgrade: it has no
    # equivalent before this revision.
    op.drop_constraint(op.f(WINDOW_LEAD), "automation_rules", type_="check")
    op.create_check_constraint(
        op.f(WINDOW_LEAD), "automation_rules", sa.text(WINDOW_LEAD_CHECK_0007)
    )
