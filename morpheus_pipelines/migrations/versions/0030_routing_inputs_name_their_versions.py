"""Routing inputs name the candidate and answer versions they were decided from

Candidate and answer versions get a number from one sequence, which changes only when what
routing reads of the version changes (docs/data-layer.md, "Day-versioned tables"). A live
bucket row's routing inputs keep the numbers of the versions it was decided from, where they
kept an md5 of their contents: the next day's carry compares two numbers per tenant instead
of rendering and hashing every candidate and answer as text (docs/decisions/0060). Existing
versions each get a number of their own. Existing inputs take the numbers of the versions
valid on the day that decided them when those still hash to the recorded fingerprint; the
others get none, and their tenants are decided again once.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-06 16:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

SEQUENCE = "apac_tenant_version_numbers"
VERSIONED = ("apac_tenant_candidate_versions", "apac_enriched_tenant_versions")
# The fingerprint the inputs recorded until this revision, as the code of 0029 computed it
# (frozen here: this migration must read what that code wrote).
FINGERPRINT = (
    "md5(ROW(c.source_type, c.custom_id, c.name, c.email, c.sales_owner_email, c.status, "
    "c.plan, c.seats, c.active_users_30d, c.signup_at AT TIME ZONE 'UTC', "
    "c.last_active_at AT TIME ZONE 'UTC', c.rejection_reason, c.forced_sales_owned, "
    "e.email_domain, e.email_domain_class, e.official_website, e.company_name, e.industry, "
    "e.employee_count, e.country, e.enrichment_status, e.enrichment_error_count)::text)"
)


def _valid_on(alias: str, day: str) -> str:
    return f"{alias}.valid_from <= {day} AND ({alias}.valid_to IS NULL OR {alias}.valid_to > {day})"


def _versions_of_inputs() -> str:
    """Each routing input's candidate ``c`` and answer ``e`` valid on its day."""
    return (
        "apac_routing_inputs r JOIN apac_tenant_candidate_versions c "
        f"ON c.tenant_id = r.tenant_id AND {_valid_on('c', 'r.partition_key')} "
        "LEFT JOIN apac_enriched_tenant_versions e "
        f"ON e.tenant_id = r.tenant_id AND {_valid_on('e', 'r.partition_key')}"
    )


def upgrade() -> None:
    op.execute(f"CREATE SEQUENCE {SEQUENCE} AS bigint CACHE 1000")
    for table in VERSIONED:
        op.add_column(table, sa.Column("version_number", sa.BigInteger(), nullable=True))
        op.execute(f"UPDATE {table} SET version_number = nextval('{SEQUENCE}')")
        op.alter_column(
            table,
            "version_number",
            nullable=False,
            server_default=sa.text(f"nextval('{SEQUENCE}')"),
        )
    op.add_column("apac_routing_inputs", sa.Column("candidate_version", sa.BigInteger()))
    op.add_column("apac_routing_inputs", sa.Column("answer_version", sa.BigInteger()))
    op.execute(
        "UPDATE apac_routing_inputs t SET candidate_version = m.cv, answer_version = m.ev "
        "FROM (SELECT r.tenant_id, c.version_number AS cv, e.version_number AS ev, "
        f"r.input_fingerprint = {FINGERPRINT} AS same FROM {_versions_of_inputs()}) m "
        "WHERE m.tenant_id = t.tenant_id AND m.same"
    )
    op.drop_column("apac_routing_inputs", "input_fingerprint")


def downgrade() -> None:
    op.add_column("apac_routing_inputs", sa.Column("input_fingerprint", sa.Text()))
    op.execute(
        f"UPDATE apac_routing_inputs t SET input_fingerprint = m.fp FROM (SELECT r.tenant_id, "
        f"{FINGERPRINT} AS fp FROM {_versions_of_inputs()} "
        "WHERE c.version_number = r.candidate_version "
        "AND e.version_number IS NOT DISTINCT FROM r.answer_version) m "
        "WHERE m.tenant_id = t.tenant_id"
    )
    # Inputs without their versions match no fingerprint: decided again.
    op.execute(
        "UPDATE apac_routing_inputs SET input_fingerprint = '' WHERE input_fingerprint IS NULL"
    )
    op.alter_column("apac_routing_inputs", "input_fingerprint", nullable=False)
    op.drop_column("apac_routing_inputs", "answer_version")
    op.drop_column("apac_routing_inputs", "candidate_version")
    for table in VERSIONED:
        op.drop_column(table, "version_number")
    op.execute(f"DROP SEQUENCE {SEQUENCE}")
