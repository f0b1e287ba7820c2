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

import importlib.util
from pathlib import Path
from types import ModuleType

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
# The fingerprint scores recorded until this revision, as the code of 0032 computed it
# (frozen here: this migration must read what that code wrote), with the model's.
FINGERPRINT = (
    "md5(ROW(d.tenant_bucket, d.priority_override, d.priority_reason, c.plan, c.seats, "
    "c.active_users_30d, c.last_active_at AT TIME ZONE 'UTC', e.employee_count, e.country, "
    "e.industry)::text || m.fingerprint)"
)


def _revision_0032() -> ModuleType:
    """0032's module: its view, which this revision recreates without one column."""
    path = Path(__file__).with_name("0032_scores_valid_for_a_range_of_days.py")
    spec = importlib.util.spec_from_file_location("_revision_0032", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _view_without_fingerprint(view: str) -> str:
    old = "v.scored_at, v.input_fingerprint, v.last_active_at"
    assert old in view
    return view.replace(old, "v.scored_at, v.last_active_at")


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
    op.execute(_view_without_fingerprint(_revision_0032().VIEW))


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
    op.execute(_revision_0032().VIEW)
    op.drop_column(DECISIONS, "version_number")
