"""Scores stored once per change: versions valid for a range of days, their recency moved on read

As 0026–0028 did for the candidates, the answers and the decisions:
``apac_tenant_score_snapshots`` becomes the view over ``apac_tenant_score_versions`` and
``apac_tenant_score_days`` (docs/decisions/0065). A version keeps the scorer's answer for the
day it was scored for (``scored_for``); when its ``recency_key`` is NULL, the view moves its
recency points to the day it answers, with the arithmetic of the scorer and the numbers of the
version's recorded model (``apac_scoring_models``), so a tenant whose only change is the
passing of time writes nothing. The existing rows are moved one version per stored row, each
answering as stored (``recency_key`` its day): the first day scored after this revision scores
every tenant once.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-07 03:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None

FILL_FACTOR = 90
TENANT_BUCKET = "tenant_bucket IN ('active', 'sales_owned')"

# The end of a CST day named by its partition key, in seconds since the epoch, as
# ``steps.scoring.as_of(partition_key).timestamp()`` gives it.
_AS_OF = (
    "extract(epoch FROM ((partition_key::date + 1)::timestamp AT TIME ZONE 'Asia/Shanghai') "
    "- interval '1 microsecond')::float8"
)
# The recency points in cents at the day's end: ``rules.scoring``'s formula, operation for
# operation in float8, so it gives the same cents (tests/tenants/test_score_view.py).
_CENTS = (
    "round(least(greatest((m.zero_credit_days - (d.as_of "
    "- floor(extract(epoch FROM v.last_active_at))::float8) / 86400.0::float8) "
    "/ (m.zero_credit_days - m.full_credit_days), 0.0::float8), 1.0::float8) "
    "* m.weight * 100.0::float8)::bigint"
)
# ``cents / 100`` as the JSON number ``json.dumps`` writes for that float.
_POINTS = (
    f"CASE WHEN {_CENTS} % 100 = 0 THEN round({_CENTS} / 100.0, 1) "
    f"ELSE trim_scale({_CENTS} / 100.0) END"
)
# Each model's recency numbers and thresholds, read once per model (OFFSET 0: not once per
# score).
_MODELS = (
    "SELECT score_model_version, "
    "(document -> 'signals' -> 'recency' ->> 'full_credit_days')::float8 AS full_credit_days, "
    "(document -> 'signals' -> 'recency' ->> 'zero_credit_days')::float8 AS zero_credit_days, "
    "(document -> 'weights' ->> 'recency')::float8 AS weight, "
    "(document -> 'thresholds' ->> 'P1')::float8 AS p1, "
    "(document -> 'thresholds' ->> 'P2')::float8 AS p2 "
    "FROM apac_scoring_models OFFSET 0"
)
# Each finished day, with the end of the day once per day (in seconds, and as a moment).
_DAYS = (
    f"SELECT partition_key, {_AS_OF} AS as_of, "
    "(partition_key::date + 1)::timestamp AT TIME ZONE 'Asia/Shanghai' AS day_end "
    "FROM apac_tenant_score_days WHERE complete OFFSET 0"
)
# The moved total in cents: the stored total minus the stored recency points plus the day's.
_TOTAL = (
    "((v.total_score * 100)::bigint - ((v.contributions ->> 'recency')::numeric * 100)::bigint "
    f"+ {_CENTS})"
)
_CALCULATED = (
    f"CASE WHEN {_TOTAL}::float8 / 100.0::float8 >= m.p1 THEN 'P1' "
    f"WHEN {_TOTAL}::float8 / 100.0::float8 >= m.p2 THEN 'P2' ELSE 'P3' END"
)
# Only a version whose recency moves on read and may have moved by the day is computed (the
# model joined); every other answers as stored, at the cost of reading it.
VIEW = f"""CREATE VIEW apac_tenant_score_snapshots AS
SELECT d.partition_key, v.tenant_id, v.tenant_bucket, v.run_id, v.score_model_version,
  CASE WHEN m.score_model_version IS NULL THEN v.total_score
    ELSE round({_TOTAL} / 100.0, 2) END AS total_score,
  CASE WHEN m.score_model_version IS NULL THEN v.calculated_priority
    ELSE {_CALCULATED} END AS calculated_priority,
  CASE WHEN m.score_model_version IS NULL OR v.priority_reason IS DISTINCT FROM 'score'
    THEN v.priority ELSE {_CALCULATED} END AS priority,
  v.priority_reason,
  CASE WHEN m.score_model_version IS NULL THEN v.contributions
    ELSE jsonb_set(v.contributions, '{{recency}}', to_jsonb({_POINTS})) END AS contributions,
  v.scored_at, v.input_fingerprint, v.last_active_at
FROM ({_DAYS}) d
JOIN apac_tenant_score_versions v ON v.valid_from <= d.partition_key
  AND (v.valid_to IS NULL OR v.valid_to > d.partition_key)
LEFT JOIN ({_MODELS}) m ON m.score_model_version = v.score_model_version
  AND v.recency_key IS NULL AND v.scored_for <> d.partition_key
  AND v.recency_moves_from < d.day_end"""

SNAPSHOT_COLUMNS = (
    "partition_key, tenant_id, tenant_bucket, run_id, score_model_version, total_score, "
    "calculated_priority, priority, priority_reason, contributions, scored_at, input_fingerprint"
)


def _score_columns() -> list[sa.Column]:
    return [
        sa.Column("total_score", sa.Numeric(6, 2), nullable=False),
        sa.Column("calculated_priority", sa.Text(), nullable=False),
        sa.Column("priority", sa.Text(), nullable=False),
        sa.Column("priority_reason", sa.Text(), nullable=True),
        sa.Column("contributions", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "apac_tenant_score_days",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("complete", sa.Boolean(), server_default=sa.text("true"), nullable=False),
        sa.Column("live_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("live_run_id", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("partition_key", name=op.f("pk_apac_tenant_score_days")),
    )
    op.create_table(
        "apac_tenant_score_versions",
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("valid_from", sa.Text(), nullable=False),
        sa.Column("valid_to", sa.Text(), nullable=True),
        sa.Column("tenant_bucket", sa.Text(), nullable=False),
        sa.Column("score_model_version", sa.Text(), nullable=False),
        sa.Column("input_fingerprint", sa.Text(), nullable=True),
        sa.Column("recency_key", sa.Text(), nullable=True),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("scored_for", sa.Text(), nullable=False),
        sa.Column("scored_at", sa.DateTime(timezone=True), nullable=False),
        *_score_columns(),
        sa.Column("last_active_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("recency_moves_from", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(TENANT_BUCKET, name=op.f("ck_apac_tenant_score_versions_tenant_bucket")),
        sa.CheckConstraint(
            "valid_to IS NULL OR valid_to > valid_from",
            name=op.f("ck_apac_tenant_score_versions_valid_range"),
        ),
        sa.CheckConstraint(
            "scored_for <= valid_from",
            name=op.f("ck_apac_tenant_score_versions_scored_before_valid"),
        ),
        sa.PrimaryKeyConstraint(
            "tenant_id", "valid_from", name=op.f("pk_apac_tenant_score_versions")
        ),
        postgresql_with={"fillfactor": FILL_FACTOR},
    )
    # Each stored row its own version, up to the next stored day, answering as stored.
    op.execute(
        "INSERT INTO apac_tenant_score_days (partition_key, complete) "
        "SELECT DISTINCT partition_key, true FROM apac_tenant_score_snapshots"
    )
    op.execute(
        "INSERT INTO apac_tenant_score_versions (tenant_id, valid_from, valid_to, tenant_bucket, "
        "score_model_version, input_fingerprint, recency_key, run_id, scored_for, scored_at, "
        "total_score, calculated_priority, priority, priority_reason, contributions, "
        "last_active_at) "
        "SELECT s.tenant_id, s.partition_key, n.next_day, s.tenant_bucket, "
        "s.score_model_version, s.input_fingerprint, s.partition_key, s.run_id, "
        "s.partition_key, s.scored_at, s.total_score, s.calculated_priority, s.priority, "
        "s.priority_reason, s.contributions, NULL "
        "FROM apac_tenant_score_snapshots s JOIN (SELECT partition_key, "
        "lead(partition_key) OVER (ORDER BY partition_key) AS next_day "
        "FROM apac_tenant_score_days) n ON n.partition_key = s.partition_key"
    )
    op.drop_table("apac_tenant_score_snapshots")
    op.execute(VIEW)


def downgrade() -> None:
    op.execute(
        "CREATE TABLE apac_tenant_score_snapshot_rows AS SELECT * FROM apac_tenant_score_snapshots"
    )
    op.execute("DROP VIEW apac_tenant_score_snapshots")
    op.create_table(
        "apac_tenant_score_snapshots",
        sa.Column("partition_key", sa.Text(), nullable=False),
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("tenant_bucket", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=False),
        sa.Column("score_model_version", sa.Text(), nullable=False),
        *_score_columns(),
        sa.Column("scored_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("input_fingerprint", sa.Text(), nullable=True),
        sa.CheckConstraint(
            TENANT_BUCKET, name=op.f("ck_apac_tenant_score_snapshots_tenant_bucket")
        ),
        sa.PrimaryKeyConstraint(
            "partition_key", "tenant_id", name=op.f("pk_apac_tenant_score_snapshots")
        ),
    )
    op.execute(
        f"INSERT INTO apac_tenant_score_snapshots ({SNAPSHOT_COLUMNS}) "
        f"SELECT {SNAPSHOT_COLUMNS} FROM apac_tenant_score_snapshot_rows"
    )
    op.execute("DROP TABLE apac_tenant_score_snapshot_rows")
    op.create_index(
        op.f("ix_apac_tenant_score_snapshots_tenant_id"),
        "apac_tenant_score_snapshots",
        ["tenant_id"],
        unique=False,
    )
    op.drop_table("apac_tenant_score_versions")
    op.drop_table("apac_tenant_score_days")
