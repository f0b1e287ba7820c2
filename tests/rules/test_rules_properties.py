"""Property tests: normalisation is idempotent and total, matching never uses personal mail."""

from __future__ import annotations

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morpheus_pipelines.platform.observability.redaction import mask_email
from morpheus_pipelines.platform.text.columns import (
    email_domains,
    normalise_identifiers,
    registrable_roots,
)
from morpheus_pipelines.platform.text.email_domain_class import (
    EMAIL_DOMAIN_CLASSES,
    FREE_EMAIL_DOMAINS,
    classify_email_domain,
)
from morpheus_pipelines.platform.text.normalise import (
    additional_domain_roots,
    email_domain,
    normalise_domain,
    normalise_email,
    normalise_identifier,
    registrable_root,
    split_additional_domains,
)
from morpheus_pipelines.tenants.rules.matching import (
    match_tenants,
    normalise_company_name,
    prepare_snapshot,
)
from morpheus_pipelines.tenants.rules.routing import (
    TENANT_BUCKETS,
    parse_email_list,
    parse_id_list,
    route_tenants,
    validate_scoring_message,
)

# Sized so the whole folder runs in a few seconds; no deadline because the first call loads the
# PSL; no example database, so test runs leave no files behind. Every run draws new examples.
FAST = settings(
    max_examples=80, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
FRAMES = settings(
    max_examples=25, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
HUGE = settings(
    max_examples=10,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Arbitrary text, including control characters, surrogates excluded (not valid str data from
# a database or JSON), plus strings that look like what tenants really type.
any_text = st.text(max_size=300)
huge_text = st.text(min_size=2_000, max_size=10_000)
label = st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
unicode_label = st.text(
    alphabet=st.characters(categories=["Ll", "Lo"], max_codepoint=0xFFFF), min_size=1, max_size=8
)
suffix = st.sampled_from(["com", "com.au", "co.jp", "com.cn", "co.kr", "jp", "de", "io", "香港"])
domain_like = st.builds(
    lambda labels, tld: ".".join([*labels, tld]),
    st.lists(st.one_of(label, unicode_label), min_size=1, max_size=3),
    suffix,
)
url_like = st.builds(
    lambda scheme, www, host, port, path, dots: f"{scheme}{www}{host}{dots}{port}{path}",
    st.sampled_from(["", "http://", "HTTPS://", "//", "ftp://user:pw@"]),
    st.sampled_from(["", "www.", "WWW."]),
    domain_like,
    st.sampled_from(["", ":443", ":8080", ":"]),
    st.sampled_from(["", "/", "/about?x=1#top", "?q", "#f"]),
    st.sampled_from(["", ".", ".."]),
)
sql_like = st.sampled_from(
    [
        "'; DROP TABLE apac_active_tenants; --",
        "acme.com' OR '1'='1",
        "x@acme.com'; DELETE FROM tenants WHERE '1'='1",
        "1; SELECT pg_sleep(10)",
        "\\x00\\x1a",
        "%00@%0a.com",
    ]
)
anything = st.one_of(any_text, url_like, sql_like, st.none(), st.integers(), st.floats())
email_like = st.builds(
    lambda local, host: f"{local}@{host}", any_text, st.one_of(domain_like, any_text)
)


@FAST
@given(st.one_of(anything, url_like, domain_like))
def test_registrable_root_is_idempotent_and_total(value: object) -> None:
    root = registrable_root(value)
    assert root is None or (
        registrable_root(root) == root and root.isascii() and root == root.lower()
    )


@FAST
@given(st.one_of(url_like, domain_like))
def test_registrable_root_ignores_case_and_decoration(value: str) -> None:
    # ASCII case only: Unicode upper-casing is not reversible ("ß".upper() == "SS").
    assert registrable_root(value.translate(ASCII_UPPER)) == registrable_root(value)
    assert registrable_root(f"  {value}  ") == registrable_root(value)


@FAST
@given(st.one_of(anything, url_like))
def test_normalise_domain_is_idempotent_and_keeps_the_root(value: object) -> None:
    domain = normalise_domain(value)
    if domain is not None:
        assert normalise_domain(domain) == domain
        assert registrable_root(domain) == registrable_root(value)


@FAST
@given(st.one_of(email_like, anything))
def test_email_domain_is_idempotent_and_total(email: object) -> None:
    domain = email_domain(email)
    if domain is not None:
        assert email_domain(f"someone@{domain}") == domain
        assert email_domain(f"SOMEONE@{domain.upper()}.") == domain


@FAST
@given(st.lists(st.one_of(email_like, anything), max_size=20))
def test_vectorised_helpers_equal_the_scalar_functions(values: list[object]) -> None:
    series = pd.Series(values, dtype=object)
    assert email_domains(series).tolist() == [email_domain(v) for v in values]
    assert registrable_roots(series).tolist() == [registrable_root(v) for v in values]
    assert normalise_identifiers(series).tolist() == [normalise_identifier(v) for v in values]


@FAST
@given(st.one_of(anything, st.booleans()))
def test_normalise_identifier_is_idempotent_and_total(value: object) -> None:
    identifier = normalise_identifier(value)
    if identifier is not None:
        assert normalise_identifier(identifier) == identifier
        assert identifier == identifier.strip() and identifier != ""


@FAST
@given(anything)
def test_normalise_email_is_idempotent(value: object) -> None:
    email = normalise_email(value)
    if email is not None:
        assert normalise_email(email) == email


@HUGE
@given(huge_text)
def test_huge_text_never_raises(value: str) -> None:
    for function in (registrable_root, normalise_domain, email_domain, normalise_identifier,
                     normalise_email, classify_email_domain, normalise_company_name):  # fmt: skip
        function(value)
    assert isinstance(mask_email(value), str)
    assert isinstance(split_additional_domains(value), list)
    additional_domain_roots(value)
    parse_email_list(value)
    parse_id_list(value)


@FAST
@given(st.one_of(anything, email_like, sql_like))
def test_every_function_is_total_on_arbitrary_input(value: object) -> None:
    assert classify_email_domain(value) in EMAIL_DOMAIN_CLASSES
    masked = mask_email(value)
    domain = email_domain(normalise_email(value))
    if domain is None:
        assert masked in {"<none>", "***"}
    else:
        # Exactly the first character of the local part, then the normalised domain.
        first_character = normalise_email(value)[0]  # type: ignore[index]
        assert masked == f"{first_character}***@{domain}"
    assert all(isinstance(root, str) for root in additional_domain_roots(value))
    assert all(part.strip() == part and part for part in split_additional_domains(value))


@FAST
@given(st.lists(st.one_of(anything, st.just("x,y"), st.just(" , ")), max_size=5))
def test_parsed_lists_hold_only_normalised_non_empty_values(values: list[object]) -> None:
    text = ",".join(str(v) for v in values)
    assert all(e and e == e.strip().lower() for e in parse_email_list(text))
    assert all(i and i == i.strip() for i in parse_id_list(text))


# --- matching ---------------------------------------------------------------------------------

FREE_DOMAINS = sorted(FREE_EMAIL_DOMAINS)
free_domain = st.sampled_from(
    ["gmail.com", "qq.com", "daum.net", "hanmail.net", "naver.com", "163.com", "yahoo.co.jp",
     "vip.qq.com", *FREE_DOMAINS[:200]]
)  # fmt: skip


@FRAMES
@given(
    st.lists(free_domain, min_size=1, max_size=8),
    st.lists(st.one_of(free_domain, domain_like), max_size=8),
    st.lists(st.tuples(label, st.sampled_from(["", "mail.", "WWW."])), min_size=1, max_size=8),
)
def test_free_email_domains_never_match_by_email(
    company_free_domains: list[str],
    company_domains: list[str],
    tenant_emails: list[tuple[str, str]],
) -> None:
    """Whatever the snapshot lists (even free domains), a free email never matches a company."""
    roots = [registrable_root(d) for d in company_free_domains + company_domains]
    snapshot = pd.DataFrame(
        {
            "hubspot_company_id": [f"c-{i}" for i in range(len(roots))],
            "portal_id": None,
            "account_id": None,
            "domain_root": roots,
            "website_domain_root": roots,
            "additional_domain_roots": [[r] if r else None for r in roots],
        }
    )
    index = prepare_snapshot(snapshot)
    free = company_free_domains * len(tenant_emails)
    tenants = pd.DataFrame(
        {
            "tenant_id": [f"t-{i}" for i in range(len(tenant_emails))],
            "custom_id": None,
            "email": [
                f"{local}@{prefix}{free[i]}" for i, (local, prefix) in enumerate(tenant_emails)
            ],
            "official_website": None,
        }
    )
    result = match_tenants(tenants, index)
    assert result["hubspot_company_id"].isna().all()
    assert set(result["email_domain_class"]) <= {"free", "disposable"}


@FRAMES
@given(
    st.lists(st.tuples(domain_like, st.booleans()), min_size=1, max_size=10),
    st.lists(st.one_of(email_like, domain_like.map(lambda d: f"x@{d}")), max_size=10),
    st.lists(st.one_of(url_like, st.none()), max_size=10),
)
def test_matches_are_unique_non_personal_roots(
    companies: list[tuple[str, bool]], emails: list[str], websites: list[str | None]
) -> None:
    snapshot = pd.DataFrame(
        {
            "hubspot_company_id": [f"c-{i}" for i in range(len(companies))],
            "portal_id": None,
            "account_id": None,
            "domain_root": [registrable_root(d) for d, _ in companies],
            "website_domain_root": [
                registrable_root(d) if twice else None for d, twice in companies
            ],
            "additional_domain_roots": None,
        }
    )
    index = prepare_snapshot(snapshot)
    size = max(len(emails), len(websites))
    tenants = pd.DataFrame(
        {
            "tenant_id": [f"t-{i}" for i in range(size)],
            "custom_id": None,
            "email": (emails + [None] * size)[:size],
            "official_website": (websites + [None] * size)[:size],
        }
    )
    result = match_tenants(tenants, index)
    owners = snapshot.groupby("domain_root")["hubspot_company_id"].nunique()
    for row, tenant in zip(result.itertuples(), tenants.itertuples(), strict=True):
        if row.hubspot_match_method == "email_domain":
            assert row.email_domain_class == "corporate"
            assert owners[row.email_domain_root] == 1
            assert row.email_domain_root == registrable_root(email_domain(tenant.email))
        elif row.hubspot_match_method == "official_website":
            assert classify_email_domain(row.website_root) == "corporate"
            assert owners[row.website_root] == 1
        else:
            assert row.hubspot_match_method is None and row.hubspot_company_id is None
        if row.ambiguous_key is not None:
            assert row.ambiguous_key in index.ambiguous_domain_roots


# --- routing ----------------------------------------------------------------------------------


@FRAMES
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["t-1", "t-2", "forced", " forced "]),
            st.one_of(st.none(), st.sampled_from(["amy@x.com", " AMY@X.COM", "bob@x.com", ""])),
            st.sampled_from([None, "c-1"]),
        ),
        max_size=12,
    ),
    st.sampled_from(["fresh", "stale", "unavailable"]),
)
def test_routing_always_produces_valid_scoring_messages(
    rows: list[tuple[str, str | None, str | None]], status: str
) -> None:
    tenants = pd.DataFrame(
        [(tenant_id, owner) for tenant_id, owner, _ in rows],
        columns=["tenant_id", "sales_owner_email"],
    )
    matches = pd.DataFrame(
        [(company, "portal_id" if company else None) for _, _, company in rows],
        columns=["hubspot_company_id", "hubspot_match_method"],
    )
    result = route_tenants(
        tenants,
        matches,
        sales_emails=frozenset({"amy@x.com"}),
        forced_ids=frozenset({"forced"}),
        snapshot_status=status,
    )
    for (tenant_id, owner, company), row in zip(rows, result.itertuples(), strict=True):
        validate_scoring_message(row.tenant_bucket, row.priority_override, row.priority_reason)
        assert row.tenant_bucket in TENANT_BUCKETS
        forced = tenant_id.strip() == "forced"
        hubspot = not forced and company is not None and status != "unavailable"
        sales = (owner or "").strip().lower() == "amy@x.com"
        expected_rule = (
            "forced_sales_owned" if forced
            else "hubspot_target_account" if hubspot
            else "apac_sales_owner" if sales
            else "default_active"
        )  # fmt: skip
        assert row.routing_rule == expected_rule
        assert row.hubspot_target == hubspot
        assert (row.priority_override == "P0") == hubspot
