"""Enrichment answers stored once per change: versions valid for a range of days

As 0026 did for the candidates: ``apac_enriched_tenants`` becomes the view over
``apac_enriched_tenant_versions`` and ``apac_enriched_tenant_days`` (docs/decisions/0057). The
reuse index moves to the versions, where it finds every answer once instead of once per day.
The existing rows are written day by day, so equal rows of consecutive days become one version.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-06 11:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

from morpheus_pipelines.platform.store.day_versions import DayVersions, write_days_from

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None

VALUE_COLUMNS = (
    "email_domain",
    "email_domain_class",
    "official_website",
    "company_name",
    "industry",
    "employee_count",
    "country",
    "enrichment_status",
    "enrichment_error_count",
    "enrichment_ms",
    "run_id",
    "enriched_at",
    "input_fingerprint",
)
REUSABLE = sa.text("enrichment_status IN ('enriched', 'not_found')")
# Written with a new version, not a change on their own.
CARRIED = ("enrichment_ms", "run_id")
FILL_FACTOR = 90


def _value_columns() -> list[sa.Column]:
    return [
        sa.Column("email_domain", sa.Text(), nullable=True),
        sa.Column("email_domain_class", sa.Text(), nullable=True),
        sa.Column("official_website", sa.Text(), nullable=True),
        sa.Column("company_name", sa.Text(), nullable=True),
        sa.Column("industry", sa.Text(), nullable=True),
        sa.Column("employee_count", sa.Integer(), nullable=True),
        sa.Column("country", sa.Text(), nullable=True),
        sa.Column("enrichment_status", sa.Text(), nullable=False),
        sa.Column("enrichment_error_count", sa.Integer(), nullable=False),
        sa.Column("enrichment_ms", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("enriched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("input_fingerprint", sa.Text(), nullable=True),
    ]


def _move_rows() -> None:
    """Every stored day into versions, as the pipeline writes them (``write_days_from``)."""
    session = Session(bind=op.get_bind())
    table = DayVersions(
        versions="apac_enriched_tenant_versions",
        days="apac_enriched_tenant_days",
        key="tenant_id",
        compared=tuple(c for c in VALUE_COLUMNS if c not in CARRIED),
        carried=CARRIED,
    )
    days = session.scalars(
        sa.text("SELECT DISTINCT partition_key FROM apac_enriched_tenants")
    ).all()
    write_days_from(session, table, rows_table="apac_enriched_tenants", days=list(days))


def upgrade() -> None:
    op.create_table(
        "apac_enriched_tenant_days",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("complete", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.PrimaryKeyConstraint("partition_key", name=op.f("pk_apac_enriched_tenant_days")),
    )
    op.create_table(
        "apac_enriched_tenant_versions",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("valid_from", sa.Text(), nullable=False),
        sa.Column("valid_to", sa.Text(), nullable=True),
        *_value_columns(),
        sa.CheckConstraint(
            "valid_to IS NULL OR valid_to > valid_from",
            name=op.f("ck_apac_enriched_tenant_versions_valid_range"),
        ),
        sa.PrimaryKeyConstraint(
            "tenant_id", "valid_from", name=op.f("pk_apac_enriched_tenant_versions")
        ),
        postgresql_with={"fillfactor": FILL_FACTOR},
    )
    _move_rows()
    op.drop_table("apac_enriched_tenants")
    op.create_index(
        "ix_apac_enriched_tenant_versions_reuse",
        "apac_enriched_tenant_versions",
        ["tenant_id", sa.text("enriched_at DESC")],
        unique=False,
        postgresql_where=REUSABLE,
    )
    op.execute(
        "CREATE VIEW apac_enriched_tenants AS "
        f"SELECT d.partition_key, v.tenant_id, {', '.join(f'v.{c}' for c in VALUE_COLUMNS)} "
        "FROM apac_enriched_tenant_days d JOIN apac_enriched_tenant_versions v "
        "ON v.valid_from <= d.partition_key "
        "AND (v.valid_to IS NULL OR v.valid_to > d.partition_key) WHERE d.complete"
    )


def downgrade() -> None:
    op.execute("CREATE TABLE apac_enriched_tenants_rows AS SELECT * FROM apac_enriched_tenants")
    op.execute("DROP VIEW apac_enriched_tenants")
    op.create_table(
        "apac_enriched_tenants",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("tenant_id", sa.Text(), nullable=False),
        *_value_columns(),
        sa.PrimaryKeyConstraint(
            "partition_key", "tenant_id", name=op.f("pk_apac_enriched_tenants")
        ),
    )
    op.execute("INSERT INTO apac_enriched_tenants SELECT * FROM apac_enriched_tenants_rows")
    op.execute("DROP TABLE apac_enriched_tenants_rows")
    op.create_index(
        "ix_apac_enriched_tenants_reuse",
        "apac_enriched_tenants",
        ["tenant_id", sa.text("enriched_at DESC")],
        unique=False,
        postgresql_where=REUSABLE,
    )
    op.drop_table("apac_enriched_tenant_versions")
    op.drop_table("apac_enriched_tenant_days")
