"""Scores name the candidate, answer and decision versions they were computed from

As 0030 did for the routing inputs: decision versions get a number from the same sequence,
which changes only when what scoring reads of the decision changes (bucket, override and its
reason), and a score version keeps the numbers of the candidate, answer and decision versions
it was scored from, where it kept an md5 of their contents. The day's scoring lists the
tenants to score again by comparing three numbers per tenant instead of rendering and
hashing every tenant's input as text (docs/decisions/0066). Existing decisions each get a
number of their own. Existing scores take the numbers of the versions valid on the day they
were scored for when those still hash to the recorded fingerprint; the others get none, and
their tenants are scored again once. The view ``apac_tenant_score_snapshots`` loses
``input_fingerprint``.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-07 06:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None

SEQUENCE = "apac_tenant_version_numbers"
DECISIONS = "apac_routing_decision_versions"
SCORES = "apac_tenant_score_versions"
NUMBERS = ("candidate_version", "answer_version", "decision_version")
# 0032's view, frozen here (this revision drops a column it shows, and its downgrade puts the
# view back).
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
VIEW_0032 = f"""CREATE VIEW apac_tenant_score_snapshots AS
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
VIEW = VIEW_0032.replace(
    "v.scored_at, v.input_fingerprint, v.last_active_at", "v.scored_at, v.last_active_at"
)


# The fingerprint scores recorded until this revision, as the code of 0032 computed it
# (frozen here: this migration must read what that code wrote), with the model's.
FINGERPRINT = (
    "md5(ROW(d.tenant_bucket, d.priority_override, d.priority_reason, c.plan, c.seats, "
    "c.active_users_30d, c.last_active_at AT TIME ZONE 'UTC', e.employee_count, e.country, "
    "e.industry)::text || m.fingerprint)"
)


def _valid_on(alias: str, day: str) -> str:
    return f"{alias}.valid_from <= {day} AND ({alias}.valid_to IS NULL OR {alias}.valid_to > {day})"


def _inputs_of_scores() -> str:
    """Each score version ``v`` with its model ``m`` and the decision ``d``, candidate ``c``
    and answer ``e`` valid on the day it was scored for."""
    return (
        f"{SCORES} v JOIN apac_scoring_models m ON m.score_model_version = v.score_model_version "
        f"JOIN {DECISIONS} d ON d.tenant_id = v.tenant_id AND {_valid_on('d', 'v.scored_for')} "
        "JOIN apac_tenant_candidate_versions c "
        f"ON c.tenant_id = v.tenant_id AND {_valid_on('c', 'v.scored_for')} "
        "LEFT JOIN apac_enriched_tenant_versions e "
        f"ON e.tenant_id = v.tenant_id AND {_valid_on('e', 'v.scored_for')}"
    )


def upgrade() -> None:
    op.add_column(DECISIONS, sa.Column("version_number", sa.BigInteger(), nullable=True))
    op.execute(f"UPDATE {DECISIONS} SET version_number = nextval('{SEQUENCE}')")
    op.alter_column(
        DECISIONS,
        "version_number",
        nullable=False,
        server_default=sa.text(f"nextval('{SEQUENCE}')"),
    )
    op.execute("DROP VIEW apac_tenant_score_snapshots")
    for column in NUMBERS:
        op.add_column(SCORES, sa.Column(column, sa.BigInteger(), nullable=True))
    op.execute(
        f"UPDATE {SCORES} t SET candidate_version = s.cv, answer_version = s.ev, "
        "decision_version = s.dv FROM (SELECT v.tenant_id, v.valid_from, "
        "c.version_number AS cv, e.version_number AS ev, d.version_number AS dv "
        f"FROM {_inputs_of_scores()} WHERE v.input_fingerprint = {FINGERPRINT}) s "
        "WHERE s.tenant_id = t.tenant_id AND s.valid_from = t.valid_from"
    )
    op.drop_column(SCORES, "input_fingerprint")
    op.execute(VIEW)
    # Every row of both tables was rewritten: plan the next reads on fresh statistics.
    op.execute(f"ANALYZE {DECISIONS}")
    op.execute(f"ANALYZE {SCORES}")


def downgrade() -> None:
    op.execute("DROP VIEW apac_tenant_score_snapshots")
    op.add_column(SCORES, sa.Column("input_fingerprint", sa.Text(), nullable=True))
    op.execute(
        f"UPDATE {SCORES} t SET input_fingerprint = s.fp FROM (SELECT v.tenant_id, "
        f"v.valid_from, {FINGERPRINT} AS fp FROM {_inputs_of_scores()} "
        "WHERE d.version_number = v.decision_version "
        "AND c.version_number = v.candidate_version "
        "AND e.version_number IS NOT DISTINCT FROM v.answer_version) s "
        "WHERE s.tenant_id = t.tenant_id AND s.valid_from = t.valid_from"
    )
    for column in NUMBERS:
        op.drop_column(SCORES, column)
    op.execute(VIEW_0032)
    op.drop_column(DECISIONS, "version_number")
