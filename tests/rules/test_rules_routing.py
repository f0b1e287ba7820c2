"""Unit tests of routing precedence and the scoring-message allowlists (002 §2, §7, §9.2)."""

from __future__ import annotations

import pandas as pd
import pytest

from morpheus_pipelines.tenants.rules.routing import (
    PRIORITY_OVERRIDE,
    PRIORITY_REASON,
    ROUTING_COLUMNS,
    ROUTING_RULES,
    SCORING_CONTRACT_VIOLATIONS,
    SNAPSHOT_STATUSES,
    TENANT_BUCKETS,
    RoutingContractError,
    invalid_scoring_rows,
    parse_email_list,
    parse_id_list,
    route_tenants,
    scoring_contract_violations,
    validate_scoring_message,
)

SALES = frozenset({"amy@morpheus.example", "bob@morpheus.example"})
FORCED = frozenset({"forced-1", "forced-2", "forced-3"})


def batch(
    *rows: tuple[str, str | None, str | None, str | None],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tenant_id, sales_owner_email, hubspot_company_id, hubspot_match_method) per row."""
    tenants = pd.DataFrame(
        [(tenant_id, owner) for tenant_id, owner, _, _ in rows],
        columns=["tenant_id", "sales_owner_email"],
    )
    matches = pd.DataFrame(
        [(company, method) for _, _, company, method in rows],
        columns=["hubspot_company_id", "hubspot_match_method"],
    )
    return tenants, matches


def route(
    *rows: tuple[str, str | None, str | None, str | None], status: str = "fresh"
) -> pd.DataFrame:
    tenants, matches = batch(*rows)
    return route_tenants(
        tenants, matches, sales_emails=SALES, forced_ids=FORCED, snapshot_status=status
    )


def test_constants() -> None:
    assert TENANT_BUCKETS == ("active", "sales_owned")
    assert SNAPSHOT_STATUSES == ("fresh", "stale", "unavailable")
    assert ROUTING_RULES == (
        "forced_sales_owned",
        "hubspot_target_account",
        "apac_sales_owner",
        "default_active",
    )
    assert (PRIORITY_OVERRIDE, PRIORITY_REASON) == ("P0", "hubspot_target_account")


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (" Amy@Morpheus.example , bob@morpheus.example,,  ",
         {"amy@morpheus.example", "bob@morpheus.example"}),
        ("", set()),
        ("  ,  , ", set()),
        (None, set()),
        ("amy@x.com,AMY@X.COM", {"amy@x.com"}),
    ],
)  # fmt: skip
def test_parse_email_list(value: str | None, parsed: set[str]) -> None:
    assert parse_email_list(value) == frozenset(parsed)


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (" t-1, t-2 ,,T-1 ", {"t-1", "t-2", "T-1"}),
        ("", set()),
        (None, set()),
        (" , ", set()),
    ],
)
def test_parse_id_list(value: str | None, parsed: set[str]) -> None:
    assert parse_id_list(value) == frozenset(parsed)


def test_precedence_forced_beats_hubspot_beats_sales_beats_default() -> None:
    result = route(
        ("forced-1", "amy@morpheus.example", "c-1", "portal_id"),  # all rules apply
        ("t-hub-and-sales", "amy@morpheus.example", "c-2", "email_domain"),
        ("t-sales", "bob@morpheus.example", None, None),
        ("t-plain", None, None, None),
    )
    assert list(result.columns) == list(ROUTING_COLUMNS)
    assert result["routing_rule"].tolist() == list(ROUTING_RULES)
    assert result["tenant_bucket"].tolist() == ["sales_owned", "active", "sales_owned", "active"]
    assert result["priority_override"].tolist() == [None, "P0", None, None]
    assert result["priority_reason"].tolist() == [None, "hubspot_target_account", None, None]
    assert result["hubspot_target"].tolist() == [False, True, False, False]
    assert result["hubspot_company_id"].tolist() == [None, "c-2", None, None]
    assert result["hubspot_match_method"].tolist() == [None, "email_domain", None, None]
    # The Sales-list evidence is recorded whichever rule decided.
    assert result["sales_owned_match"].tolist() == [True, True, True, False]
    assert result["skip_enrichment_and_scoring"].tolist() == [True, False, False, False]


def test_forced_tenant_skips_scoring_and_gets_no_override() -> None:
    result = route((" forced-2 ", None, None, None))
    assert result["routing_rule"].tolist() == ["forced_sales_owned"]
    assert result["tenant_bucket"].tolist() == ["sales_owned"]
    assert result["skip_enrichment_and_scoring"].tolist() == [True]


def test_stale_snapshot_still_uses_matches() -> None:
    result = route(("t-1", "amy@morpheus.example", "c-1", "account_id"), status="stale")
    assert result["routing_rule"].tolist() == ["hubspot_target_account"]
    assert result["priority_override"].tolist() == ["P0"]


def test_unavailable_snapshot_ignores_matches_and_falls_through() -> None:
    result = route(
        ("t-sales", "amy@morpheus.example", "c-1", "portal_id"),
        ("t-plain", None, "c-2", "email_domain"),
        status="unavailable",
    )
    assert result["routing_rule"].tolist() == ["apac_sales_owner", "default_active"]
    assert result["tenant_bucket"].tolist() == ["sales_owned", "active"]
    assert result["hubspot_target"].tolist() == [False, False]
    assert result["hubspot_company_id"].tolist() == [None, None]
    assert result["priority_override"].tolist() == [None, None]


@pytest.mark.parametrize(
    ("owner", "sales_owned"),
    [
        ("amy@morpheus.example", True),
        ("  AMY@Morpheus.Example ", True),  # normalised: trimmed and lower-cased
        ("amy@morpheus.example.", False),
        ("amy@morpheus.example.com", False),
        ("amy2@morpheus.example", False),
        ("my@morpheus.example", False),
        ("carol@morpheus.example", False),  # same domain is not enough
        ("morpheus.example", False),
        ("amy", False),
        ("", False),
        (None, False),
    ],
)
def test_sales_email_matches_exactly_only(owner: str | None, sales_owned: bool) -> None:
    result = route(("t-1", owner, None, None))
    assert result["sales_owned_match"].tolist() == [sales_owned]
    assert result["tenant_bucket"].tolist() == ["sales_owned" if sales_owned else "active"]


def test_empty_sales_list_disables_sales_routing() -> None:
    tenants, matches = batch(("t-1", "amy@morpheus.example", None, None))
    result = route_tenants(
        tenants,
        matches,
        sales_emails=parse_email_list(""),
        forced_ids=frozenset(),
        snapshot_status="fresh",
    )
    assert result["routing_rule"].tolist() == ["default_active"]


def test_hand_built_sets_are_normalised() -> None:
    tenants, matches = batch(("T-9", "amy@morpheus.example", None, None))
    result = route_tenants(
        tenants,
        matches,
        sales_emails=frozenset({" AMY@morpheus.example "}),
        forced_ids=frozenset({" T-9 "}),
        snapshot_status="fresh",
    )
    assert result["routing_rule"].tolist() == ["forced_sales_owned"]
    assert result["sales_owned_match"].tolist() == [True]


def test_forced_ids_compare_exactly() -> None:
    result = route(("FORCED-1", None, None, None), ("forced-10", None, None, None))
    assert result["routing_rule"].tolist() == ["default_active", "default_active"]


def test_without_matches_frame_routing_continues() -> None:
    tenants, _ = batch(("t-1", "bob@morpheus.example", None, None))
    result = route_tenants(
        tenants, None, sales_emails=SALES, forced_ids=FORCED, snapshot_status="fresh"
    )
    assert result["routing_rule"].tolist() == ["apac_sales_owner"]


@pytest.mark.parametrize("status", ["", "FRESH", "failed", None])
def test_invalid_snapshot_status_is_rejected(status: object) -> None:
    tenants, matches = batch(("t-1", None, None, None))
    with pytest.raises(ValueError, match="snapshot_status"):
        route_tenants(
            tenants,
            matches,
            sales_emails=SALES,
            forced_ids=FORCED,
            snapshot_status=status,  # type: ignore[arg-type]
        )


def test_misaligned_matches_are_rejected() -> None:
    tenants, matches = batch(("t-1", None, None, None), ("t-2", None, None, None))
    matches.index = pd.Index([5, 6])
    with pytest.raises(ValueError, match="same index"):
        route_tenants(
            tenants, matches, sales_emails=SALES, forced_ids=FORCED, snapshot_status="fresh"
        )


def test_match_with_unknown_method_is_rejected() -> None:
    with pytest.raises(RoutingContractError) as error:
        route(("t-1", None, "c-1", "company_name"))
    assert error.value.reason == "hubspot_match_method_not_allowlisted"


def test_output_keeps_index_and_dtypes() -> None:
    tenants, matches = batch(("t-1", None, "c-1", "portal_id"), ("t-2", None, None, None))
    tenants.index = matches.index = pd.Index(["x", "y"])
    result = route_tenants(
        tenants, matches, sales_emails=SALES, forced_ids=FORCED, snapshot_status="fresh"
    )
    assert result.index.tolist() == ["x", "y"]
    for column in ("hubspot_target", "sales_owned_match", "skip_enrichment_and_scoring"):
        assert result[column].dtype == bool
    assert result["priority_override"].dtype == object
    assert result["priority_override"].tolist() == ["P0", None]


def test_routed_rows_always_satisfy_the_scoring_contract() -> None:
    result = route(
        ("forced-1", None, "c-1", "portal_id"),
        ("t-2", None, "c-2", "official_website"),
        ("t-3", "amy@morpheus.example", None, None),
        ("t-4", None, None, None),
    )
    assert not invalid_scoring_rows(result).any()
    for row in result.itertuples():
        validate_scoring_message(row.tenant_bucket, row.priority_override, row.priority_reason)


# --- scoring contract (002 §9.2) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("bucket", "override", "reason"),
    [
        ("active", None, None),
        ("sales_owned", None, None),
        ("active", "P0", "hubspot_target_account"),
        ("sales_owned", "P0", "hubspot_target_account"),
        ("active", float("nan"), float("nan")),
        ("active", pd.NA, None),
    ],
)
def test_valid_scoring_messages(bucket: str, override: object, reason: object) -> None:
    validate_scoring_message(bucket, override, reason)  # does not raise
    frame = pd.DataFrame(
        {"tenant_bucket": [bucket], "priority_override": [override], "priority_reason": [reason]}
    )
    assert scoring_contract_violations(frame).tolist() == [None]


@pytest.mark.parametrize(
    ("bucket", "override", "reason", "violation"),
    [
        ("Active", None, None, "tenant_bucket_not_allowlisted"),
        (" active", None, None, "tenant_bucket_not_allowlisted"),
        ("apac_active_tenants", None, None, "tenant_bucket_not_allowlisted"),
        ("active; DROP TABLE x", None, None, "tenant_bucket_not_allowlisted"),
        ("", None, None, "tenant_bucket_not_allowlisted"),
        (None, None, None, "tenant_bucket_not_allowlisted"),
        (float("nan"), "P0", "hubspot_target_account", "tenant_bucket_not_allowlisted"),
        ("active", "P1", "hubspot_target_account", "priority_override_not_allowlisted"),
        ("active", "p0", "hubspot_target_account", "priority_override_not_allowlisted"),
        ("active", "", None, "priority_override_not_allowlisted"),
        ("active", "P0", None, "priority_reason_not_allowlisted"),
        ("active", "P0", "manual", "priority_reason_not_allowlisted"),
        ("sales_owned", "P0", "forced_sales_owned", "priority_reason_not_allowlisted"),
        ("active", None, "hubspot_target_account", "priority_reason_without_override"),
    ],
)
def test_invalid_scoring_messages(
    bucket: object, override: object, reason: object, violation: str
) -> None:
    with pytest.raises(RoutingContractError) as error:
        validate_scoring_message(bucket, override, reason)
    assert error.value.reason == violation
    assert isinstance(error.value, ValueError)
    frame = pd.DataFrame(
        {"tenant_bucket": [bucket], "priority_override": [override], "priority_reason": [reason]},
        dtype=object,
    )
    assert scoring_contract_violations(frame).tolist() == [violation]
    assert invalid_scoring_rows(frame).tolist() == [True]


def test_violation_reasons_are_listed() -> None:
    assert set(SCORING_CONTRACT_VIOLATIONS) == {
        "tenant_bucket_not_allowlisted",
        "priority_override_not_allowlisted",
        "priority_reason_not_allowlisted",
        "priority_reason_without_override",
    }


def test_invalid_scoring_rows_is_aligned_with_the_frame() -> None:
    frame = pd.DataFrame(
        {
            "tenant_bucket": ["active", "nope", "sales_owned"],
            "priority_override": [None, None, "P2"],
            "priority_reason": [None, None, "x"],
        },
        index=[7, 8, 9],
    )
    mask = invalid_scoring_rows(frame)
    assert mask.index.tolist() == [7, 8, 9]
    assert mask.tolist() == [False, True, True]
    assert mask.dtype == bool
