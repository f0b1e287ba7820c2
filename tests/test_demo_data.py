"""The deterministic APAC demo data set (``morpheus_pipelines.demo_data``)."""

from __future__ import annotations

import json
import time
from datetime import date, datetime, timedelta
from pathlib import Path

import pandas as pd
import psycopg
import pytest

from morpheus_pipelines.devtools.demo.dataset import (
    CST,
    EXCLUDED_ACTIVE_STATUSES,
    HUBSPOT_MATCH_METHODS,
    TENANT_COLUMNS,
    TRUTH_COLUMNS,
    DemoDataset,
    generate_dataset,
)
from morpheus_pipelines.devtools.emulators import DomainIntelEmulator, HubSpotEmulator
from morpheus_pipelines.platform.text.email_domain_class import classify_email_domain
from morpheus_pipelines.platform.text.normalise import (
    additional_domain_roots,
    email_domain,
    normalise_email,
    normalise_identifier,
    registrable_root,
)
from morpheus_pipelines.tenants.rules.matching import match_tenants, prepare_snapshot

DAY = date(2026, 7, 14)
STATUSES = {"active", "paid", "free_trial", "new_user", "closing", "suspended"}


@pytest.fixture(scope="module")
def ds() -> DemoDataset:
    return generate_dataset(tenants=3_000, companies=120, seed=11, partition_day=DAY)


def _cst(moment: datetime) -> pd.Timestamp:
    return pd.Timestamp(moment.replace(tzinfo=CST)).tz_convert("UTC")


def _company_roots(company: dict) -> set[str]:
    roots = {registrable_root(company["domain"]), registrable_root(company["website"])}
    roots |= set(additional_domain_roots(company["hs_additional_domains"]))
    return {root for root in roots if root is not None}


def _candidates(ds: DemoDataset) -> pd.DataFrame:
    return ds.tenants[ds.truth["candidate"].to_numpy()]


def test_same_seed_gives_identical_data_and_another_seed_does_not() -> None:
    first = generate_dataset(tenants=1_000, companies=50, seed=5, partition_day=DAY)
    again = generate_dataset(tenants=1_000, companies=50, seed=5, partition_day=DAY)
    pd.testing.assert_frame_equal(first.tenants, again.tenants)
    pd.testing.assert_frame_equal(first.truth, again.truth)
    assert first.companies == again.companies
    assert first.domain_intel == again.domain_intel
    assert first.hubspot_data() == again.hubspot_data()
    assert (first.sales_emails, first.forced_ids, first.token, first.expected) == (
        again.sales_emails,
        again.forced_ids,
        again.token,
        again.expected,
    )
    other = generate_dataset(tenants=1_000, companies=50, seed=6, partition_day=DAY)
    assert not first.tenants["email"].equals(other.tenants["email"])
    assert first.token != other.token


def test_tenants_have_exactly_the_source_table_columns(ds: DemoDataset) -> None:
    tenants = ds.tenants
    assert tuple(tenants.columns) == TENANT_COLUMNS
    assert len(tenants) == 3_000
    assert tenants["id"].is_unique and tenants["id"].notna().all()
    for column in ("created_at", "last_active_at"):
        assert isinstance(tenants[column].dtype, pd.DatetimeTZDtype)
        assert str(tenants[column].dt.tz) == "UTC"
    assert tenants["created_at"].notna().all()
    assert str(tenants["seats"].dtype) == "Int64"
    assert str(tenants["active_users_30d"].dtype) == "Int64"
    for column in ("id", "custom_id", "name", "email", "sales_owner_email", "status", "region"):
        assert tenants[column].dtype == object, column
    assert set(tenants["status"]) == STATUSES
    assert set(tenants["region"]) == {"APAC", "EMEA", "AMER"}
    assert 0.80 < (tenants["region"] == "APAC").mean() < 0.90
    both = tenants["seats"].notna() & tenants["active_users_30d"].notna()
    assert (tenants.loc[both, "active_users_30d"] <= tenants.loc[both, "seats"]).all()
    active = tenants["last_active_at"].notna()
    assert (tenants.loc[active, "last_active_at"] >= tenants.loc[active, "created_at"]).all()
    assert tenants["custom_id"].notna().mean() > 0.2
    assert tuple(ds.truth.columns) == TRUTH_COLUMNS
    assert ds.truth["tenant_id"].tolist() == tenants["id"].tolist()


def test_signups_include_the_cst_day_boundaries(ds: DemoDataset) -> None:
    created = ds.tenants["created_at"]
    start = datetime(DAY.year, DAY.month, DAY.day)
    inside = [_cst(start), _cst(start + timedelta(hours=23, minutes=59, seconds=59))]
    outside = [_cst(start - timedelta(seconds=1)), _cst(start + timedelta(days=1))]
    for moment in inside + outside:
        rows = ds.tenants[created == moment]
        assert len(rows) >= 1, moment
        assert (rows["region"] == "APAC").all()
    # 00:00 CST is 16:00 UTC the day before: a UTC-date filter would get these wrong.
    local_day = created.dt.tz_convert(CST).dt.date
    assert ((local_day == DAY) & (created.dt.date != DAY)).any()
    assert ((local_day != DAY) & (created.dt.date == DAY)).any()
    signups = (local_day == DAY) & (ds.tenants["region"] == "APAC")
    assert signups.tolist() == ds.truth["signup_candidate"].tolist()
    assert int(signups.sum()) == ds.expected["signup_candidates"] > 10
    assert ds.expected["boundary"]["at_day_start"] >= 1
    assert ds.expected["boundary"]["at_day_last_second"] >= 1
    active = (ds.tenants["region"] == "APAC") & ~ds.tenants["status"].isin(EXCLUDED_ACTIVE_STATUSES)
    assert int(active.sum()) == ds.expected["active_candidates"]


def test_every_match_method_is_planted_in_the_raw_data(ds: DemoDataset) -> None:
    candidates = _candidates(ds)
    companies = ds.companies
    portal_ids = {normalise_identifier(c["portal_id__c"]) for c in companies} - {None}
    account_ids = {normalise_identifier(c["account_id__c"]) for c in companies} - {None}
    assert portal_ids & set(candidates["id"])
    assert account_ids & set(candidates["custom_id"].map(normalise_identifier).dropna())
    assert any(isinstance(c["portal_id__c"], int) for c in companies)  # served as text later

    root_companies: dict[str, set[str]] = {}
    for company in companies:
        for root in _company_roots(company):
            root_companies.setdefault(root, set()).add(company["id"])
    unique_roots = {root for root, ids in root_companies.items() if len(ids) == 1}
    ambiguous_roots = {root for root, ids in root_companies.items() if len(ids) > 1}
    email_roots = candidates["email"].map(lambda e: registrable_root(email_domain(e)))
    corporate = candidates["email"].map(lambda e: classify_email_domain(email_domain(e)))
    assert (email_roots.isin(unique_roots) & (corporate == "corporate")).sum() > 50
    assert email_roots.isin(ambiguous_roots).any()  # tenants use an ambiguous root
    assert any(not root.isascii() or "xn--" in root for root in ambiguous_roots)

    sites = pd.Series(
        [
            (ds.domain_intel["tenants"].get(t) or {}).get("official_website")
            for t in candidates["id"]
        ],
        index=candidates.index,
        dtype=object,
    )
    site_only = sites.map(registrable_root).isin(unique_roots) & ~email_roots.isin(unique_roots)
    assert site_only.sum() >= 5
    free_company_domains = {c["domain"] for c in companies} & {"gmail.com", "qq.com"}
    assert free_company_domains == {"gmail.com", "qq.com"}
    assert candidates["email"].str.endswith("@gmail.com", na=False).any()

    for method in HUBSPOT_MATCH_METHODS:
        assert ds.expected["matches"][method] > 0, method
    assert ds.expected["ambiguous_unmatched"] > 0
    assert ds.expected["planted"]["ambiguous_root_pairs"] >= 1


def test_truth_agrees_with_the_project_matcher(ds: DemoDataset) -> None:
    companies = ds.companies
    snapshot = pd.DataFrame(
        {
            "hubspot_company_id": [c["id"] for c in companies],
            "portal_id": [c["portal_id__c"] for c in companies],
            "account_id": [c["account_id__c"] for c in companies],
            "domain_root": [registrable_root(c["domain"]) for c in companies],
            "website_domain_root": [registrable_root(c["website"]) for c in companies],
            "additional_domain_roots": [
                additional_domain_roots(c["hs_additional_domains"]) for c in companies
            ],
        }
    )
    intel = ds.domain_intel["tenants"]
    tenants = pd.DataFrame(
        {
            "tenant_id": ds.tenants["id"],
            "custom_id": ds.tenants["custom_id"],
            "email": ds.tenants["email"],
            "official_website": pd.Series(
                [(intel.get(t) or {}).get("official_website") for t in ds.tenants["id"]],
                dtype=object,
            ),
        }
    )
    matched = match_tenants(tenants, prepare_snapshot(snapshot))
    truth = ds.truth
    for column in ("hubspot_match_method", "hubspot_company_id"):
        assert matched[column].fillna("-").tolist() == truth[column].fillna("-").tolist()
    assert matched["ambiguous_match"].tolist() == truth["ambiguous_match"].tolist()
    routed = truth["candidate"] & ~truth["forced"]
    counts = matched.loc[routed, "hubspot_match_method"].value_counts()
    assert {m: int(counts.get(m, 0)) for m in HUBSPOT_MATCH_METHODS} == ds.expected["matches"]


def test_forced_ids_are_existing_apac_candidates(ds: DemoDataset) -> None:
    assert len(ds.forced_ids) == 3 and len(set(ds.forced_ids)) == 3
    forced = ds.tenants.set_index("id").loc[ds.forced_ids]
    assert (forced["region"] == "APAC").all()
    truth = ds.truth.set_index("tenant_id").loc[ds.forced_ids]
    assert truth["candidate"].all() and truth["forced"].all()
    assert (truth["bucket"] == "sales_owned").all()
    # Forced wins over a HubSpot match and over the Sales list.
    assert truth["hubspot_match_method"].notna().any()
    assert truth["sales_owned"].any()
    assert (
        generate_dataset(tenants=500, companies=20, partition_day=DAY, forced_ids=0).forced_ids
        == []
    )


def test_sales_owner_variants_normalise_into_the_list(ds: DemoDataset) -> None:
    sales = set(ds.sales_emails)
    assert len(ds.sales_emails) == 6
    assert all(email == email.strip().lower() for email in ds.sales_emails)
    raw = ds.tenants["sales_owner_email"]
    normalised = raw.map(normalise_email)
    in_list = normalised.isin(sales)
    assert 0.06 < in_list.mean() < 0.10
    assert in_list.tolist() == ds.truth["sales_owned"].tolist()
    assert int(in_list.sum()) == ds.expected["sales_owner_apac"]
    variants = raw[in_list & (raw != normalised)]
    assert variants.str.contains(r"[A-Z]").any() and variants.str.startswith(" ").any()
    # Near misses and other sales people share the domain but never match exactly.
    domain_only = normalised.str.endswith("@morpheus.example.com", na=False) & ~in_list
    assert domain_only.sum() > 100
    assert normalised.str.contains("+apac@", regex=False, na=False).any()
    assert (raw == "").any() and raw.isna().any()
    truth = ds.truth
    both = truth["candidate"] & truth["sales_owned"] & truth["hubspot_match_method"].notna()
    assert (truth.loc[both & ~truth["forced"], "bucket"] == "active").all()
    assert ds.expected["hubspot_and_sales_candidates"] >= 1
    assert ds.expected["buckets"]["sales_owned"] > 0


def test_messy_and_malformed_values_are_present(ds: DemoDataset) -> None:
    emails = ds.tenants["email"]
    assert emails.isna().any() and (emails == "").any()
    for bad in ("no-at-sign", "a@@b", "'; DROP TABLE tenants; --"):
        assert (emails == bad).any(), bad
    assert emails.str.len().max() > 254
    assert emails.dropna().map(lambda e: not e.isascii()).any()
    malformed = ds.truth["email_kind"].isin(["missing", "empty", "malformed"])
    assert malformed.sum() == ds.expected["malformed_emails"] > 20
    assert emails[malformed].map(email_domain).map(registrable_root).isna().all()
    domains = emails.dropna().map(email_domain).dropna()
    free = {"gmail.com", "qq.com", "163.com", "naver.com", "daum.net", "yahoo.co.jp", "outlook.com"}
    assert free <= set(domains)
    assert all(classify_email_domain(d) == "free" for d in free)
    # The same IDN root written in Unicode by some tenants and in punycode by others.
    idn = emails[ds.truth["email_kind"] == "idn"].map(lambda e: e.strip().rpartition("@")[2])
    assert idn.map(str.isascii).any() and (~idn.map(str.isascii)).any()
    assert emails.str.contains("@www.", regex=False, na=False).any()
    assert emails.str.contains("@mail.", regex=False, na=False).any()
    corporate = emails[ds.truth["email_kind"] == "corporate"].dropna()
    assert (corporate == corporate.str.upper()).any()
    suffixes = (".com.au", ".co.jp", ".com.cn", ".co.kr", ".com.sg", ".co.nz", ".com.hk", ".co.in")
    for suffix in suffixes:
        assert corporate.str.lower().str.endswith(suffix).any(), suffix


def test_emulator_data_loads_and_serves(ds: DemoDataset, tmp_path: Path) -> None:
    data = ds.hubspot_data(list_id="777")
    assert data["token"] == ds.token and ds.token.startswith("pat-")
    assert len(data["lists"]["777"]["members"]) == len(ds.companies) == 120
    paths = ds.write(tmp_path / "out")
    assert set(paths) == {"tenants", "hubspot", "domain_intel"}
    assert json.loads(paths["hubspot"].read_text(encoding="utf-8")) == ds.hubspot_data()
    with DomainIntelEmulator.from_file(paths["domain_intel"]) as intel:
        assert len(intel.to_data()["tenants"]) == len(ds.domain_intel["tenants"])
    with HubSpotEmulator.from_file(paths["hubspot"]) as hubspot:
        assert len(hubspot.to_data()["companies"]) == 120
    apac = int((ds.tenants["region"] == "APAC").sum())
    assert len(ds.domain_intel["tenants"]) > apac / 2  # a majority of APAC tenants
    assert ds.environment()["FORCED_SALES_OWNED_TENANT_IDS"].split(",") == ds.forced_ids


def test_tenants_csv_loads_with_postgres_copy(
    ds: DemoDataset, tmp_path: Path, database_url: str
) -> None:
    path = ds.write(tmp_path)["tenants"]
    url = database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as conn:
        conn.execute(
            "CREATE TEMP TABLE t (id text primary key, custom_id text, name text, email text,"
            " sales_owner_email text, status text, region text, plan text, seats int,"
            " active_users_30d int, created_at timestamptz, last_active_at timestamptz)"
        )
        with conn.cursor().copy("COPY t FROM STDIN (FORMAT csv, HEADER)") as copy:
            copy.write(path.read_bytes())
        count, empty, null, first = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE email = ''),"
            " count(*) FILTER (WHERE email IS NULL), min(created_at) FROM t"
        ).fetchone()
    emails = ds.tenants["email"]
    assert count == len(ds.tenants)
    assert empty == int((emails == "").sum()) > 0
    assert null == int(emails.isna().sum()) > 0
    assert pd.Timestamp(first) == ds.tenants["created_at"].min()


def test_small_generation_is_fast_and_arguments_are_checked() -> None:
    started = time.perf_counter()
    generate_dataset(tenants=1_000, companies=50, seed=1, partition_day=DAY)
    assert time.perf_counter() - started < 2.0
    with pytest.raises(ValueError):
        generate_dataset(tenants=10, companies=50, partition_day=DAY)
    with pytest.raises(ValueError):
        generate_dataset(tenants=1_000, companies=5, partition_day=DAY)
