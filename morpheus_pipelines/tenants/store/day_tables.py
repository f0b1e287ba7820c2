"""The tenant tables stored as versions valid for a range of days (docs/data-layer.md,
"Day-versioned tables"), and one day's rows of each as a subquery for the repositories'
statements (``day_versions.rows_on``; their views answer the same rows, slower)."""

from __future__ import annotations

from psycopg import sql

from morpheus_pipelines.platform.store.day_versions import DayVersions, rows_on
from morpheus_pipelines.tenants.store.models.tenants import ENRICHMENT_COLUMNS, VERSION_NUMBERS

# What the source selection gives of a candidate, in this order.
CANDIDATE_SOURCE_COLUMNS = (
    "tenant_id",
    "source_type",
    "custom_id",
    "name",
    "email",
    "sales_owner_email",
    "status",
    "plan",
    "seats",
    "active_users_30d",
    "signup_at",
    "last_active_at",
)
CANDIDATE_COLUMNS = (*CANDIDATE_SOURCE_COLUMNS[1:], "forced_sales_owned", "rejection_reason")
CANDIDATE_VERSIONS = DayVersions(
    versions="apac_tenant_candidate_versions",
    days="apac_tenant_candidate_days",
    key="tenant_id",
    compared=CANDIDATE_COLUMNS,
    carried=("run_id",),
    # Routing reads all of a candidate: any change is a new number.
    number="version_number",
    numbered=CANDIDATE_COLUMNS,
    number_sequence=VERSION_NUMBERS,
)

# What enrichment answers of a candidate, and what reuse needs besides: when the service
# answered, and what it was asked.
ENRICHMENT_RESULT_COLUMNS = ("tenant_id", *ENRICHMENT_COLUMNS, "enrichment_ms")
STORED_COLUMNS = (*ENRICHMENT_RESULT_COLUMNS, "enriched_at", "input_fingerprint")
# Only the run that wrote an answer and how long it took are not a change on their own.
ANSWER_VERSIONS = DayVersions(
    versions="apac_enriched_tenant_versions",
    days="apac_enriched_tenant_days",
    key="tenant_id",
    compared=tuple(c for c in STORED_COLUMNS[1:] if c != "enrichment_ms"),
    carried=("enrichment_ms", "run_id"),
    # Routing reads the answer, not when it was given or what was asked: an answer asked
    # again that says the same keeps its number.
    number="version_number",
    numbered=ENRICHMENT_COLUMNS,
    number_sequence=VERSION_NUMBERS,
)

# What a decision says of its tenant: a change in any of it is a new version. The run that
# wrote it, when and for which day are not a change on their own, and the snapshot the run
# routed with is the day's (``apac_routing_decision_days``).
DECISION_VERSIONS = DayVersions(
    versions="apac_routing_decision_versions",
    days="apac_routing_decision_days",
    key="tenant_id",
    compared=(
        "source_type",
        "tenant_bucket",
        "routing_rule",
        "hubspot_company_id",
        "hubspot_match_method",
        "ambiguous_match",
        "ambiguous_key",
        "name_hint_company_id",
        "email_domain_class",
        "sales_owned_match",
        "priority_override",
        "priority_reason",
        "moved",
        "moved_from",
        "rejection_reason",
    ),
    carried=("run_id", "decided_at", "decided_for"),
    # Scoring reads the bucket and the override with its reason: a decision that changes
    # only how the tenant matched keeps its number.
    number="version_number",
    numbered=("tenant_bucket", "priority_override", "priority_reason"),
    number_sequence=VERSION_NUMBERS,
)


# A tenant's score: a new version when its bucket, its model or a version of its scoring input
# (by number) changes, or, for a version that answers as stored (``recency_key`` its day), on
# any later day; the score itself is the answer for ``scored_for``, the day the version's
# recency points are moved from when a day is read (docs/scoring.md, "How scores are
# stored").
SCORE_VERSIONS = DayVersions(
    versions="apac_tenant_score_versions",
    days="apac_tenant_score_days",
    key="tenant_id",
    compared=(
        "tenant_bucket",
        "score_model_version",
        "candidate_version",
        "answer_version",
        "decision_version",
        "recency_key",
    ),
    carried=(
        "run_id",
        "scored_for",
        "scored_at",
        "total_score",
        "calculated_priority",
        "priority",
        "priority_reason",
        "contributions",
        "last_active_at",
        "recency_moves_from",
    ),
)


def _day(partition_key: str | sql.Composable) -> sql.Composable:
    return (
        partition_key if isinstance(partition_key, sql.Composable) else sql.Literal(partition_key)
    )


def candidates_on(partition_key: str | sql.Composable) -> sql.Composable:
    """The day's candidates (``apac_tenant_candidates`` of that partition) as a subquery."""
    return rows_on(CANDIDATE_VERSIONS, _day(partition_key))


def answers_on(partition_key: str | sql.Composable) -> sql.Composable:
    """The day's answers (``apac_enriched_tenants`` of that partition) as a subquery."""
    return rows_on(ANSWER_VERSIONS, _day(partition_key))


def candidates_with_answers(partition_key: str | sql.Composable) -> sql.Composable:
    """The day's candidates ``c`` joined to their answers ``e``, if any."""
    return sql.SQL("{c} c LEFT JOIN {e} e ON e.tenant_id = c.tenant_id").format(
        c=candidates_on(partition_key), e=answers_on(partition_key)
    )


def decisions_on(partition_key: str | sql.Composable) -> sql.Composable:
    """The day's decisions (``apac_routing_decisions`` of that partition, without the day's
    snapshot evidence) as a subquery."""
    return rows_on(DECISION_VERSIONS, _day(partition_key))
