"""Unit tests of HubSpot target-account matching: portal id, account id, email domain,
official website, in that order."""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd
import pytest

from morpheus_pipelines.tenants.rules.matching import (
    HUBSPOT_MATCH_METHODS,
    MATCH_COLUMNS,
    KeyLookup,
    SnapshotIndex,
    match_tenants,
    normalise_company_name,
    prepare_snapshot,
)
from tests.support.tenants import lookups

COMPANIES = [
    # id, portal_id, account_id, domain_root, website_domain_root, additional roots, name, alias
    ("c-acme", "P-100", "A-1", "acme.com.au", "acme.com.au", ["acme.co.jp", "acme.com.au"],
     "Acme Pty Ltd", None),
    ("c-beta", "P-200", "A-2", "beta.co.kr", None, None, "Beta", "Beta Korea"),
    ("c-shared-1", None, None, "shared.com", None, None, "Shared One", None),
    ("c-shared-2", None, None, None, "shared.com", None, "Shared Two", None),
    ("c-shared-3", None, None, "other3.com", None, ["alsoshared.co.jp"], None, None),
    ("c-shared-4", None, None, "other4.com", None, ["alsoshared.co.jp"], None, None),
    ("c-gamma", None, None, "gamma.com.cn", None, ["gmail.com"], "Gamma", None),
    ("c-qq", None, None, "qq.com", None, None, "Tencent", None),
    ("c-dup-portal-1", "P-DUP", "A-3", None, None, None, None, None),
    ("c-dup-portal-2", "P-DUP", None, None, None, None, None, None),
    ("c-dup-account-1", None, "A-DUP", None, None, None, None, None),
    ("c-dup-account-2", None, "A-DUP", None, None, None, None, None),
    ("c-empty", "", "  ", "", None, [], "", None),
    ("c-delta", None, None, None, None, '["delta.co.jp", "www.delta.com.au"]', "Delta KK", None),
    ("c-idn", None, None, "xn--r8jz45g.jp", None, None, "例え株式会社", None),
]  # fmt: skip


def snapshot_frame(rows: list[tuple[object, ...]] = COMPANIES) -> pd.DataFrame:
    return pd.DataFrame(
        rows,
        columns=[
            "hubspot_company_id",
            "portal_id",
            "account_id",
            "domain_root",
            "website_domain_root",
            "additional_domain_roots",
            "name",
            "account_alias",
        ],
    )


@pytest.fixture(scope="module")
def index() -> SnapshotIndex:
    return prepare_snapshot(snapshot_frame())


def tenants(*rows: dict[str, object]) -> pd.DataFrame:
    defaults = {"tenant_id": None, "custom_id": None, "email": None, "official_website": None}
    return pd.DataFrame([{**defaults, **row} for row in rows], columns=list(defaults))


def match_one(index: SnapshotIndex, **tenant: object) -> dict[str, object]:
    result = match_tenants(tenants({"tenant_id": "t-1", **tenant}), index)
    return result.iloc[0].to_dict()


# --- prepare_snapshot -------------------------------------------------------------------------


def test_prepare_snapshot_finds_ambiguous_roots_across_columns(index: SnapshotIndex) -> None:
    assert index.ambiguous_domain_roots == {"shared.com", "alsoshared.co.jp"}
    assert index.domain_roots.owners["acme.com.au"] == "c-acme"
    assert index.domain_roots.owners["acme.co.jp"] == "c-acme"
    assert index.domain_roots.owners["delta.co.jp"] == "c-delta"  # from a JSON array text
    assert index.domain_roots.owners["delta.com.au"] == "c-delta"
    assert "" not in index.domain_roots.owners


def test_prepare_snapshot_finds_ambiguous_ids(index: SnapshotIndex) -> None:
    assert index.portal_ids.ambiguous_keys == {"P-DUP"}
    assert index.account_ids.ambiguous_keys == {"A-DUP"}
    assert index.portal_ids.owners == {"P-100": "c-acme", "P-200": "c-beta"}
    assert "" not in index.account_ids.owners
    assert index.company_count == len(COMPANIES)


def test_prepare_snapshot_requires_columns() -> None:
    with pytest.raises(ValueError, match="domain_root"):
        prepare_snapshot(snapshot_frame().drop(columns=["domain_root"]))


def test_prepare_snapshot_renormalises_roots() -> None:
    frame = snapshot_frame([("c-1", None, None, "WWW.Acme.COM.", "https://shop.acme.com/x", None,
                             None, None)])  # fmt: skip
    index = prepare_snapshot(frame)
    assert index.domain_roots.owners == {"acme.com": "c-1"}
    assert not index.ambiguous_domain_roots


def test_a_prepared_snapshot_reads_back_from_its_json(index: SnapshotIndex) -> None:
    again = SnapshotIndex.from_json(index.to_json())
    assert lookups(again) == lookups(index)
    assert len(lookups(index)) == 4 and index.domain_roots.ambiguous_keys
    assert again.company_count == index.company_count


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda d: d.update(format=0), "format"),
        (lambda d: d.pop("domain_roots"), "no domain_roots"),
        (lambda d: d["portal_ids"]["companies"].__setitem__(0, 7), "not lists of text"),
        (lambda d: d["account_ids"]["keys"].append("A-9"), "keys without companies"),
        (lambda d: d["company_names"].update(ambiguous="acme"), "company_names"),
        (lambda d: d.update(company_count=-1), "company_count"),
        (lambda d: d.update(company_count=True), "company_count"),
        (lambda d: d.update(company_count="12"), "company_count"),
    ],
)
def test_a_prepared_snapshot_of_another_shape_is_refused(
    index: SnapshotIndex, change: Callable[[dict], object], error: str
) -> None:
    document = json.loads(index.to_json())
    change(document)
    with pytest.raises(ValueError, match=error):
        SnapshotIndex.from_json(json.dumps(document))


def test_a_prepared_snapshot_that_is_not_json_is_refused() -> None:
    with pytest.raises(ValueError):
        SnapshotIndex.from_json('{"format": 1, "company_count"')
    with pytest.raises(ValueError, match="format"):
        SnapshotIndex.from_json("[]")


def test_key_lookup_find() -> None:
    lookup = KeyLookup.from_pairs(
        pd.Series(["a", "b", "b", "c", "c", None]), pd.Series(["1", "2", "3", "4", "4", "5"])
    )
    companies, found, ambiguous = lookup.find(pd.Series(["a", "b", "c", "z", None]).to_numpy())
    assert companies.tolist() == ["1", None, "4", None, None]
    assert found.tolist() == [True, False, True, False, False]
    assert ambiguous.tolist() == [False, True, False, False, False]


# --- each method ----------------------------------------------------------------------------


def test_portal_id_match(index: SnapshotIndex) -> None:
    result = match_one(index, tenant_id=" P-100 ")
    assert result["hubspot_company_id"] == "c-acme"
    assert result["hubspot_match_method"] == "portal_id"


def test_account_id_match(index: SnapshotIndex) -> None:
    result = match_one(index, custom_id="A-2")
    assert result["hubspot_company_id"] == "c-beta"
    assert result["hubspot_match_method"] == "account_id"


def test_email_domain_match_through_each_root_column(index: SnapshotIndex) -> None:
    for email, company in [
        ("jane@acme.com.au", "c-acme"),  # domain root
        ("jane@mail.acme.co.jp", "c-acme"),  # additional root, email subdomain
        ("JANE@BETA.CO.KR.", "c-beta"),
        ("taro@例え.jp", "c-idn"),  # Unicode email domain against a punycode root
        ("jane@www.delta.com.au", "c-delta"),
    ]:
        result = match_one(index, email=email)
        assert (result["hubspot_company_id"], result["hubspot_match_method"]) == (
            company,
            "email_domain",
        ), email


def test_official_website_match(index: SnapshotIndex) -> None:
    result = match_one(index, email="jane@gmail.com", official_website="https://www.beta.co.kr/")
    assert result["hubspot_company_id"] == "c-beta"
    assert result["hubspot_match_method"] == "official_website"
    assert result["website_root"] == "beta.co.kr"


def test_no_match(index: SnapshotIndex) -> None:
    result = match_one(index, email="jane@unknown.co.jp", official_website="unknown.com")
    assert result["hubspot_company_id"] is None
    assert result["hubspot_match_method"] is None
    assert not result["ambiguous_match"]
    assert result["ambiguous_key"] is None


# --- order and precedence ---------------------------------------------------------------------


def test_portal_id_beats_every_other_method(index: SnapshotIndex) -> None:
    result = match_one(
        index,
        tenant_id="P-200",
        custom_id="A-1",
        email="jane@acme.com.au",
        official_website="acme.co.jp",
    )
    assert (result["hubspot_company_id"], result["hubspot_match_method"]) == ("c-beta", "portal_id")


def test_account_id_beats_domains(index: SnapshotIndex) -> None:
    result = match_one(index, custom_id="A-2", email="x@acme.com.au", official_website="acme.co.jp")
    assert (result["hubspot_company_id"], result["hubspot_match_method"]) == (
        "c-beta",
        "account_id",
    )


def test_email_domain_beats_official_website(index: SnapshotIndex) -> None:
    result = match_one(index, email="x@beta.co.kr", official_website="https://acme.com.au")
    assert (result["hubspot_company_id"], result["hubspot_match_method"]) == (
        "c-beta",
        "email_domain",
    )


# --- exclusions -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "email",
    [
        "jane@gmail.com",
        "jane@qq.com",
        "jane@daum.net",
        "jane@hanmail.net",
        "jane@vip.qq.com",
        "jane@mailinator.com",
    ],
)
def test_free_and_disposable_email_domains_never_match(index: SnapshotIndex, email: str) -> None:
    # c-gamma lists gmail.com and c-qq lists qq.com: still no match by email.
    result = match_one(index, email=email)
    assert result["hubspot_company_id"] is None
    assert result["email_domain_class"] in {"free", "disposable"}
    assert not result["ambiguous_match"]


def test_free_official_website_never_matches(index: SnapshotIndex) -> None:
    result = match_one(index, email="jane@gmail.com", official_website="https://mail.qq.com/")
    assert result["hubspot_company_id"] is None
    assert result["website_root"] == "qq.com"


def test_ambiguous_root_never_matches(index: SnapshotIndex) -> None:
    result = match_one(index, email="jane@shared.com")
    assert result["hubspot_company_id"] is None
    assert result["ambiguous_match"]
    assert result["ambiguous_key"] == "shared.com"
    result = match_one(index, official_website="https://alsoshared.co.jp")
    assert result["hubspot_company_id"] is None
    assert result["ambiguous_key"] == "alsoshared.co.jp"


def test_ambiguous_root_falls_through_to_the_next_method(index: SnapshotIndex) -> None:
    result = match_one(index, email="jane@shared.com", official_website="beta.co.kr")
    assert (result["hubspot_company_id"], result["hubspot_match_method"]) == (
        "c-beta",
        "official_website",
    )
    assert result["ambiguous_match"]
    assert result["ambiguous_key"] == "shared.com"


def test_ambiguous_ids_never_match_and_fall_through(index: SnapshotIndex) -> None:
    result = match_one(index, tenant_id="P-DUP", custom_id="A-DUP", email="x@acme.com.au")
    assert (result["hubspot_company_id"], result["hubspot_match_method"]) == (
        "c-acme",
        "email_domain",
    )
    assert result["ambiguous_key"] == "P-DUP"  # the first ambiguity met
    assert result["ambiguous_match"]


def test_ambiguity_after_the_winning_step_is_not_reported(index: SnapshotIndex) -> None:
    result = match_one(index, tenant_id="P-100", email="x@shared.com")
    assert result["hubspot_match_method"] == "portal_id"
    assert not result["ambiguous_match"]
    assert result["ambiguous_key"] is None


@pytest.mark.parametrize("empty", ["", "   ", None])
def test_empty_values_never_match(index: SnapshotIndex, empty: object) -> None:
    # c-empty has an empty portal_id, account_id and domain_root.
    result = match_one(index, tenant_id=empty, custom_id=empty, email=empty, official_website=empty)
    assert result["hubspot_company_id"] is None
    assert result["email_domain_class"] == "missing"


# --- output contract --------------------------------------------------------------------------


def test_output_columns_alignment_and_dtypes(index: SnapshotIndex) -> None:
    batch = tenants(
        {"tenant_id": "P-100"},
        {"tenant_id": "t-2", "email": "x@gmail.com"},
        {"tenant_id": "t-3", "email": "bad"},
    )
    batch.index = pd.Index([30, 10, 20])
    result = match_tenants(batch, index)
    assert list(result.columns) == list(MATCH_COLUMNS)
    assert result.index.tolist() == [30, 10, 20]
    assert result["ambiguous_match"].dtype == bool
    for column in MATCH_COLUMNS:
        if column != "ambiguous_match":
            assert result[column].dtype == object, column
    assert result["hubspot_company_id"].tolist() == ["c-acme", None, None]
    assert result["email_domain"].tolist() == [None, "gmail.com", None]
    assert result["email_domain_class"].tolist() == ["missing", "free", "missing"]
    assert set(result["hubspot_match_method"].dropna()) <= set(HUBSPOT_MATCH_METHODS)


def test_match_tenants_requires_columns(index: SnapshotIndex) -> None:
    with pytest.raises(ValueError, match="official_website"):
        match_tenants(tenants({"tenant_id": "x"}).drop(columns=["official_website"]), index)


def test_empty_batch_and_empty_snapshot() -> None:
    empty_index = prepare_snapshot(snapshot_frame([]))
    result = match_tenants(tenants({"tenant_id": "P-100", "email": "x@acme.com.au"}), empty_index)
    assert result["hubspot_company_id"].tolist() == [None]
    assert len(match_tenants(tenants(), empty_index)) == 0


def test_batch_of_many_tenants_matches_each_row_independently(index: SnapshotIndex) -> None:
    batch = tenants(
        {"tenant_id": "P-100"},
        {"tenant_id": "t", "custom_id": "A-2"},
        {"tenant_id": "t", "email": "a@acme.co.jp"},
        {"tenant_id": "t", "official_website": "beta.co.kr"},
        {"tenant_id": "t", "email": "a@gmail.com"},
    )
    result = match_tenants(batch, index)
    assert result["hubspot_match_method"].tolist() == [
        "portal_id",
        "account_id",
        "email_domain",
        "official_website",
        None,
    ]
    assert result["hubspot_company_id"].tolist() == ["c-acme", "c-beta", "c-acme", "c-beta", None]


# --- name hints -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "normalised"),
    [
        ("ACME Pte. Ltd.", "acme"),
        ("Acme", "acme"),
        ("PT Acme Indonesia Tbk", "acmeindonesia"),
        ("例え株式会社", "例え"),
        ("(주)베타", "베타"),
        ("".join(chr(ord(c) + 0xFEE0) for c in "ACME") + "\u3000Co., Ltd.", "acme"),
        ("Ltd", None),
        ("", None),
        (None, None),
    ],
)
def test_normalise_company_name(name: object, normalised: str | None) -> None:
    assert normalise_company_name(name) == normalised


def test_name_hint_is_logged_but_never_matches(index: SnapshotIndex) -> None:
    batch = tenants(
        {"tenant_id": "t-1", "email": "x@gmail.com"},
        {"tenant_id": "t-2", "email": "x@gmail.com"},
        {"tenant_id": "t-3", "email": "x@gmail.com"},
    )
    batch["name"] = ["ACME PTY. LTD.", "beta korea", "Shared"]
    result = match_tenants(batch, index)
    assert result["name_hint_company_id"].tolist() == ["c-acme", "c-beta", None]
    assert result["hubspot_company_id"].tolist() == [None, None, None]


def test_without_name_column_there_are_no_hints(index: SnapshotIndex) -> None:
    result = match_tenants(tenants({"tenant_id": "t-1"}), index)
    assert result["name_hint_company_id"].tolist() == [None]
