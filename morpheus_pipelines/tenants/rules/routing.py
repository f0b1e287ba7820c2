"""Tenant routing precedence and the routing → scoring contract (docs/pipeline.md).

Every tenant (active candidate or previous-day signup) goes to exactly one bucket, by the first
rule that applies:

1. ``forced_sales_owned``      its id is in ``FORCED_SALES_OWNED_TENANT_IDS``
                               → ``sales_owned``; it skips enrichment and scoring and keeps its
                               existing priority;
2. ``hubspot_target_account``  it matched a company of the HubSpot snapshot and the snapshot is
                               ``fresh`` or ``stale`` → ``active``, scored normally, final
                               priority overridden to ``P0`` with reason
                               ``hubspot_target_account``;
3. ``apac_sales_owner``        its trimmed, lower-cased ``sales_owner_email`` is *exactly* one of
                               ``APAC_SALES_EMAILS`` → ``sales_owned``, scored normally;
4. ``default_active``          → ``active``, existing behaviour.

An ``unavailable`` snapshot (no successful sync ever) disables rule 2, so tenants fall through to
rules 3 and 4. A tenant that matches both HubSpot and the Sales list is an Active P0 tenant.

Scoring accepts only the allowlisted buckets ``active``/``sales_owned`` and only the override
``P0`` with reason ``hubspot_target_account`` (docs/pipeline.md);
:func:`validate_scoring_message` and :func:`scoring_contract_violations` enforce that at the
routing → scoring boundary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from morpheus_pipelines.platform.text.columns import distinct_value_codes, normalise_identifiers
from morpheus_pipelines.platform.text.normalise import normalise_email, normalise_identifier
from morpheus_pipelines.tenants.rules.matching import HUBSPOT_MATCH_METHODS
from morpheus_pipelines.tenants.rules.vocabulary import (
    Bucket,
    Priority,
    RoutingRule,
    SnapshotStatus,
    values,
)

__all__ = [
    "ACTIVE",
    "APAC_SALES_OWNER",
    "DEFAULT_ACTIVE",
    "FORCED_SALES_OWNED",
    "HUBSPOT_SNAPSHOT_USABLE_STATUSES",
    "HUBSPOT_TARGET_ACCOUNT",
    "MATCH_METHOD_NOT_ALLOWLISTED",
    "PRIORITY_OVERRIDE",
    "PRIORITY_REASON",
    "ROUTING_COLUMNS",
    "ROUTING_RULES",
    "SALES_OWNED",
    "SCORING_CONTRACT_VIOLATIONS",
    "SNAPSHOT_STATUSES",
    "TENANT_BUCKETS",
    "RoutingContractError",
    "invalid_scoring_rows",
    "parse_email_list",
    "parse_id_list",
    "route_tenants",
    "scoring_contract_violations",
    "validate_scoring_message",
]

ACTIVE = Bucket.ACTIVE.value
SALES_OWNED = Bucket.SALES_OWNED.value
TENANT_BUCKETS: tuple[str, ...] = values(Bucket)

SNAPSHOT_STATUSES: tuple[str, ...] = values(SnapshotStatus)
# A stale snapshot is the last *successful* one (docs/pipeline.md) and is still trusted for
# matching.
HUBSPOT_SNAPSHOT_USABLE_STATUSES: frozenset[str] = frozenset(
    {SnapshotStatus.FRESH.value, SnapshotStatus.STALE.value}
)

FORCED_SALES_OWNED = RoutingRule.FORCED_SALES_OWNED.value
HUBSPOT_TARGET_ACCOUNT = RoutingRule.HUBSPOT_TARGET_ACCOUNT.value
APAC_SALES_OWNER = RoutingRule.APAC_SALES_OWNER.value
DEFAULT_ACTIVE = RoutingRule.DEFAULT_ACTIVE.value
# The rules a routable candidate can be decided by, in precedence order.
ROUTING_RULES: tuple[str, ...] = (
    FORCED_SALES_OWNED,
    HUBSPOT_TARGET_ACCOUNT,
    APAC_SALES_OWNER,
    DEFAULT_ACTIVE,
)

PRIORITY_OVERRIDE = Priority.P0.value
PRIORITY_REASON = RoutingRule.HUBSPOT_TARGET_ACCOUNT.value

ROUTING_COLUMNS: tuple[str, ...] = (
    "tenant_bucket",
    "routing_rule",
    "priority_override",
    "priority_reason",
    "hubspot_target",
    "hubspot_company_id",
    "hubspot_match_method",
    "sales_owned_match",
    "skip_enrichment_and_scoring",
)
"""Columns of the frame returned by :func:`route_tenants`, in order."""

# Reasons reported by validate_scoring_message (RoutingContractError.reason) and by
# scoring_contract_violations, so logs and asset checks use the same words.
BUCKET_NOT_ALLOWLISTED = "tenant_bucket_not_allowlisted"
OVERRIDE_NOT_ALLOWLISTED = "priority_override_not_allowlisted"
REASON_NOT_ALLOWLISTED = "priority_reason_not_allowlisted"
REASON_WITHOUT_OVERRIDE = "priority_reason_without_override"
# Raised by route_tenants only: a match whose method the tables' column does not allow.
MATCH_METHOD_NOT_ALLOWLISTED = "hubspot_match_method_not_allowlisted"
SCORING_CONTRACT_VIOLATIONS: tuple[str, ...] = (
    BUCKET_NOT_ALLOWLISTED,
    OVERRIDE_NOT_ALLOWLISTED,
    REASON_NOT_ALLOWLISTED,
    REASON_WITHOUT_OVERRIDE,
)


class RoutingContractError(ValueError):
    """A scoring message broke the routing → scoring allowlists (docs/pipeline.md); ``reason``
    names the broken rule."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def parse_email_list(value: str | None) -> frozenset[str]:
    """Parse ``APAC_SALES_EMAILS``: comma-separated, trimmed, lower-cased, empty parts dropped.

    ``None`` or an empty string gives an empty set, which disables Sales-owned routing.
    """
    if not isinstance(value, str):
        return frozenset()
    emails = (normalise_email(part) for part in value.split(","))
    return frozenset(email for email in emails if email is not None)


def parse_id_list(value: str | None) -> frozenset[str]:
    """Parse ``FORCED_SALES_OWNED_TENANT_IDS``: comma-separated, trimmed, empty parts dropped.

    Ids keep their case: tenant ids are compared exactly.
    """
    if not isinstance(value, str):
        return frozenset()
    ids = (normalise_identifier(part) for part in value.split(","))
    return frozenset(tenant_id for tenant_id in ids if tenant_id is not None)


def _normalised_set(
    values: Iterable[object], normalise: Callable[[object], str | None]
) -> frozenset[str]:
    normalised = (normalise(value) for value in values)
    return frozenset(value for value in normalised if value is not None)


def route_tenants(
    tenants_df: pd.DataFrame,
    matches_df: pd.DataFrame | None,
    *,
    sales_emails: frozenset[str],
    forced_ids: frozenset[str],
    snapshot_status: str,
) -> pd.DataFrame:
    """Route a batch of tenants to a bucket by the routing precedence (see module docstring).

    ``tenants_df`` needs ``tenant_id`` and ``sales_owner_email``. ``matches_df`` is the output
    of :func:`~.matching.match_tenants` for the same rows (same index),
    or ``None`` when no matching was done. ``sales_emails`` and ``forced_ids`` are normalised
    again here, so a hand-built set behaves like a parsed one.

    Returns a frame aligned with ``tenants_df.index`` with :data:`ROUTING_COLUMNS`:

    ``tenant_bucket``         ``active`` or ``sales_owned``
    ``routing_rule``          the rule that decided, one of :data:`ROUTING_RULES`
    ``priority_override``     ``P0`` when the HubSpot rule decided, else ``None``
    ``priority_reason``       ``hubspot_target_account`` when the HubSpot rule decided, else None
    ``hubspot_target``        bool: the HubSpot rule decided
    ``hubspot_company_id``    the matched company when the HubSpot rule decided, else ``None``
    ``hubspot_match_method``  the match method when the HubSpot rule decided, else ``None``
    ``sales_owned_match``     bool: the Sales email is in the list, whichever rule decided (the
                              evidence to log instead of the email itself)
    ``skip_enrichment_and_scoring`` bool: the forced fast path, which keeps the stored priority

    Raises ``ValueError`` for an unknown ``snapshot_status``, missing columns or misaligned
    frames, and :class:`RoutingContractError` for a matched row without an allowlisted method.
    """
    if snapshot_status not in SNAPSHOT_STATUSES:
        raise ValueError(
            f"snapshot_status must be one of {', '.join(SNAPSHOT_STATUSES)}, "
            f"got {snapshot_status!r}"
        )
    missing = [c for c in ("tenant_id", "sales_owner_email") if c not in tenants_df.columns]
    if missing:
        raise ValueError(f"tenant batch is missing required columns: {', '.join(missing)}")
    row_count = len(tenants_df)

    forced_id_set = _normalised_set(forced_ids, normalise_identifier)
    if forced_id_set:
        tenant_ids = normalise_identifiers(tenants_df["tenant_id"])
        forced = np.fromiter((t in forced_id_set for t in tenant_ids), dtype=bool, count=row_count)
    else:
        forced = np.zeros(row_count, dtype=bool)

    matched_company = np.full(row_count, None, dtype=object)
    matched_method = np.full(row_count, None, dtype=object)
    if matches_df is not None:
        if not matches_df.index.equals(tenants_df.index):
            raise ValueError("matches_df must have the same index as tenants_df")
        matched_company = normalise_identifiers(matches_df["hubspot_company_id"]).to_numpy()
        matched_method = matches_df["hubspot_match_method"].to_numpy(dtype=object)
    hubspot_usable = snapshot_status in HUBSPOT_SNAPSHOT_USABLE_STATUSES
    hubspot_rule = ~forced & pd.notna(matched_company) & hubspot_usable

    allowlisted_method = pd.Series(matched_method, dtype=object).isin(HUBSPOT_MATCH_METHODS)
    invalid_method = hubspot_rule & ~allowlisted_method.to_numpy()
    if invalid_method.any():
        raise RoutingContractError(
            MATCH_METHOD_NOT_ALLOWLISTED,
            f"{int(invalid_method.sum())} matched tenants have a hubspot_match_method outside "
            f"{', '.join(HUBSPOT_MATCH_METHODS)}",
        )

    # Exact membership of the normalised address: no domain-wide or partial match
    # (docs/pipeline.md).
    sales_email_set = _normalised_set(sales_emails, normalise_email)
    codes, owner_in_sales_list = distinct_value_codes(
        tenants_df["sales_owner_email"], lambda email: normalise_email(email) in sales_email_set
    )
    sales_owned_match = owner_in_sales_list.astype(bool)[codes]
    sales_rule = ~forced & ~hubspot_rule & sales_owned_match

    decided_by = [forced, hubspot_rule, sales_rule]
    bucket = np.select(decided_by, [SALES_OWNED, ACTIVE, SALES_OWNED], ACTIVE).astype(object)
    rule = np.select(
        decided_by, [FORCED_SALES_OWNED, HUBSPOT_TARGET_ACCOUNT, APAC_SALES_OWNER], DEFAULT_ACTIVE
    ).astype(object)

    def text_column(values: np.ndarray) -> pd.Series:
        return pd.Series(values, index=tenants_df.index, dtype=object)

    def bool_column(values: np.ndarray) -> pd.Series:
        return pd.Series(values, index=tenants_df.index, dtype=bool)

    return pd.DataFrame(
        {
            "tenant_bucket": text_column(bucket),
            "routing_rule": text_column(rule),
            "priority_override": text_column(np.where(hubspot_rule, PRIORITY_OVERRIDE, None)),
            "priority_reason": text_column(np.where(hubspot_rule, PRIORITY_REASON, None)),
            "hubspot_target": bool_column(hubspot_rule),
            "hubspot_company_id": text_column(np.where(hubspot_rule, matched_company, None)),
            "hubspot_match_method": text_column(np.where(hubspot_rule, matched_method, None)),
            "sales_owned_match": bool_column(sales_owned_match),
            "skip_enrichment_and_scoring": bool_column(forced),
        },
        index=tenants_df.index,
    )


def _is_missing(value: object) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def validate_scoring_message(
    bucket: object, priority_override: object, priority_reason: object
) -> None:
    """Enforce the scoring-message allowlists (docs/pipeline.md) for one message.

    Accepted: ``bucket`` exactly ``active`` or ``sales_owned``; either no override and no reason,
    or override ``P0`` with reason ``hubspot_target_account``. Missing values (``None``, ``NaN``,
    ``pd.NA``) mean "absent". Anything else raises :class:`RoutingContractError` whose
    ``reason`` is one of :data:`SCORING_CONTRACT_VIOLATIONS`.
    """
    if not isinstance(bucket, str) or bucket not in TENANT_BUCKETS:
        raise RoutingContractError(
            BUCKET_NOT_ALLOWLISTED,
            f"tenant_bucket {bucket!r} is not one of {', '.join(TENANT_BUCKETS)}",
        )
    if _is_missing(priority_override):
        if not _is_missing(priority_reason):
            raise RoutingContractError(
                REASON_WITHOUT_OVERRIDE,
                f"priority_reason {priority_reason!r} given without a priority_override",
            )
        return
    if priority_override != PRIORITY_OVERRIDE:
        raise RoutingContractError(
            OVERRIDE_NOT_ALLOWLISTED,
            f"priority_override {priority_override!r} is not allowed; only "
            f"{PRIORITY_OVERRIDE!r} is",
        )
    if priority_reason != PRIORITY_REASON:
        raise RoutingContractError(
            REASON_NOT_ALLOWLISTED,
            f"a {PRIORITY_OVERRIDE} override needs reason {PRIORITY_REASON!r}, "
            f"got {priority_reason!r}",
        )


def scoring_contract_violations(df: pd.DataFrame) -> pd.Series:
    """Vectorised :func:`validate_scoring_message` over ``tenant_bucket``, ``priority_override``
    and ``priority_reason``: per row the violated rule (one of
    :data:`SCORING_CONTRACT_VIOLATIONS`, the first that applies) or ``None`` when valid.
    """
    bucket = df["tenant_bucket"].astype(object)
    override = df["priority_override"].astype(object)
    reason = df["priority_reason"].astype(object)
    override_missing = override.isna().to_numpy()
    reason_missing = reason.isna().to_numpy()
    # isin compares exactly, so "Active", " active" or "p0" are violations like any other value.
    bucket_ok = bucket.isin(TENANT_BUCKETS).to_numpy()
    override_ok = override.isin([PRIORITY_OVERRIDE]).to_numpy()
    reason_ok = reason.isin([PRIORITY_REASON]).to_numpy()
    violation = np.select(
        [
            ~bucket_ok,
            override_missing & ~reason_missing,
            ~override_missing & ~override_ok,
            ~override_missing & ~reason_ok,
        ],
        [
            BUCKET_NOT_ALLOWLISTED,
            REASON_WITHOUT_OVERRIDE,
            OVERRIDE_NOT_ALLOWLISTED,
            REASON_NOT_ALLOWLISTED,
        ],
        default=None,
    )
    return pd.Series(violation, index=df.index, dtype=object)


def invalid_scoring_rows(df: pd.DataFrame) -> pd.Series:
    """Boolean mask of rows that :func:`validate_scoring_message` would reject."""
    return scoring_contract_violations(df).notna()
