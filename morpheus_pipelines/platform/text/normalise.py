"""Normalisation of domains, URLs, emails and identifiers (docs/pipeline.md).

Every matching rule compares *normalised* values, so the same company written as
``https://WWW.Acme.com.au:443/about``, ``acme.com.au.`` or ``sales@acme.com.au`` must produce the
same key, and nothing a tenant typed may ever make the pipeline raise.

Canonical form of a host
    lower-case ASCII, internationalised labels in their IDNA punycode form (``münchen.de`` and
    ``xn--mnchen-3ya.de`` both become ``xn--mnchen-3ya.de``), no trailing dot, at least two
    labels, every label 1 to 63 letters/digits/hyphens (not starting or ending with a hyphen),
    at most 253 characters, and a last label that is not numeric (so IPv4 addresses are rejected).
    Punycode is the canonical form because it is what DNS, HubSpot and the PSL data agree on and
    because an ASCII key is cheap to hash, store and compare.

Registrable root
    the registrable domain ("eTLD+1") of a canonical host according to the Public Suffix List,
    e.g. ``shop.acme.com.au`` → ``acme.com.au``. The list is the snapshot bundled with
    ``tldextract``; it is never downloaded at run time. PSL *private* suffixes (``github.io``,
    ``blogspot.com``, …) are honoured, so two different sites on a shared hosting suffix never
    collapse to the same root (``a.github.io`` and ``b.github.io`` stay distinct). A host under a
    suffix the list does not know (``acme.local``), a bare public suffix (``com.au``) or an IP
    address has no registrable root.

All functions accept any object and return ``None`` (or an empty list) rather than raise. The
same normalisation over a pandas column is :mod:`.columns`.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache

import idna
import tldextract

from morpheus_pipelines.platform.text.contact_data import (
    InvalidContactData,
    normalise_email_address,
)

__all__ = [
    "CONTROL_CHARACTERS",
    "additional_domain_roots",
    "canonical_host",
    "email_domain",
    "normalise_domain",
    "normalise_email",
    "normalise_identifier",
    "offline_public_suffix_list",
    "registrable_root",
    "root_of_canonical_host",
    "split_additional_domains",
]


def offline_public_suffix_list() -> tldextract.TLDExtract:
    """A ``TLDExtract`` that only ever reads the PSL snapshot bundled with the package.

    An empty URL list means "never fetch" (it also overrides the
    ``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS`` environment variable) and no ``cache_dir`` means
    "never read or write a cache file", so there is no network access and no filesystem state.
    """
    return tldextract.TLDExtract(
        suffix_list_urls=(),
        cache_dir=None,
        fallback_to_snapshot=True,
        include_psl_private_domains=True,
    )


_PUBLIC_SUFFIX_LIST = offline_public_suffix_list()

# Bounded so a run over a million distinct values cannot grow the process without limit; a run
# normally sees far fewer distinct domains than this.
_CACHE_SIZE = 1 << 18

_MAX_HOST_LENGTH = 253
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_LDH_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# Browsers treat a backslash like a slash, so it also ends the host part of a URL.
_END_OF_HOST = re.compile(r"[/?#\\]")
_WWW_PREFIX = "www."


def _is_canonical_a_label(label: str) -> bool:
    """An ``xn--`` label is kept only if it is the exact IDNA encoding of some Unicode label."""
    try:
        return idna.encode(idna.decode(label)).decode("ascii") == label
    except (idna.IDNAError, UnicodeError, ValueError):
        return False


@lru_cache(maxsize=_CACHE_SIZE)
def canonical_host(host: str) -> str | None:
    """Return ``host`` in canonical form (see module docstring) or ``None`` if it is not a host."""
    # A valid host is at most 253 ASCII characters and its Unicode form is never longer than its
    # punycode form, so anything longer is rejected before doing any expensive work.
    if not host or len(host) > _MAX_HOST_LENGTH or CONTROL_CHARACTERS.search(host):
        return None
    if not host.isascii():
        try:
            # UTS #46 (non-transitional, as browsers do) maps case, width and ideographic dots.
            host = idna.encode(host, uts46=True, transitional=False).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError):
            return None
    host = host.lower().rstrip(".")
    if len(host) > _MAX_HOST_LENGTH:
        return None
    labels = host.split(".")
    if len(labels) < 2 or labels[-1].isdigit():
        return None
    for label in labels:
        if not _LDH_LABEL.fullmatch(label):
            return None
        if label.startswith("xn--") and not _is_canonical_a_label(label):
            return None
    return host


def _host_of_locator(value: str) -> str | None:
    """Extract the canonical host from a domain, URL or email-like string."""
    text = value.strip()
    if not text or CONTROL_CHARACTERS.search(text):
        return None
    if not text.isascii():
        # Full-width delimiters (U+FF20 @, U+FF0F /, U+FF1A :, U+FF0E .) typed on CJK keyboards
        # become their ASCII forms, and ideographic full stops (U+3002) become dots, before the
        # string is split into its parts.
        text = unicodedata.normalize("NFKC", text).replace("\u3002", ".")
    _, scheme_separator, rest = text.partition("://")
    if scheme_separator:
        text = rest
    elif text[:7].lower() == "mailto:":
        text = text[7:]
    text = _END_OF_HOST.split(text.lstrip("/"), maxsplit=1)[0]
    text = text.rpartition("@")[2]  # userinfo, or the local part of an email address
    if text.startswith("["):  # IPv6 literal
        return None
    host, port_separator, port = text.rpartition(":")
    if port_separator:
        if port and not (port.isascii() and port.isdigit()):
            return None
        text = host
    return canonical_host(text.strip())


def _punycode_rule(rule: str) -> str | None:
    """A PSL rule with its Unicode labels in punycode, to compare with canonical hosts."""
    if rule.isascii():
        return rule
    labels = []
    for label in rule.split("."):
        if label.isascii():
            labels.append(label)
            continue
        try:
            labels.append(idna.encode(label, uts46=True, transitional=False).decode("ascii"))
        except (idna.IDNAError, UnicodeError, ValueError):
            return None
    return ".".join(labels)


@dataclass(frozen=True)
class _SuffixRules:
    """The Public Suffix List split into its three kinds of rule, all in punycode."""

    suffixes: frozenset[str]  # "com.au": a public suffix
    wildcard_parents: frozenset[str]  # "ck" for "*.ck": every label under "ck" is a suffix
    exceptions: frozenset[str]  # "www.ck" for "!www.ck": not a suffix despite a wildcard


@cache
def _suffix_rules() -> _SuffixRules:
    suffixes: set[str] = set()
    wildcard_parents: set[str] = set()
    exceptions: set[str] = set()
    # tlds reads the snapshot bundled with tldextract (offline, see _PUBLIC_SUFFIX_LIST).
    for rule in _PUBLIC_SUFFIX_LIST.tlds:
        encoded = _punycode_rule(rule.lower())
        if encoded is None:
            continue
        if encoded.startswith("!"):
            exceptions.add(encoded[1:])
        elif encoded.startswith("*."):
            wildcard_parents.add(encoded[2:])
        else:
            suffixes.add(encoded)
    return _SuffixRules(frozenset(suffixes), frozenset(wildcard_parents), frozenset(exceptions))


@lru_cache(maxsize=_CACHE_SIZE)
def _psl_root(host: str) -> str | None:
    """Registrable domain of a canonical host, or ``None`` when the PSL gives it none.

    The PSL algorithm over the bundled rules: the longest matching rule wins, an exception rule
    (``!city.kawasaki.jp``) beats the wildcard it carves out of, and a host under no rule at all
    has no registrable domain (as in tldextract; the PSL's implicit ``*`` rule is not applied,
    so ``acme.local`` or an unknown TLD never produces a matching key). Performing the look-up
    here rather than through ``TLDExtract.__call__`` makes it about five times faster.
    """
    rules = _suffix_rules()
    labels = host.split(".")
    for start in range(len(labels)):
        candidate = ".".join(labels[start:])
        if candidate in rules.exceptions:
            suffix_start = start + 1
        elif candidate in rules.suffixes or (
            start + 1 < len(labels) and ".".join(labels[start + 1 :]) in rules.wildcard_parents
        ):
            suffix_start = start
        else:
            continue
        if suffix_start == 0:
            return None  # the host is itself a public suffix
        return ".".join(labels[suffix_start - 1 :])
    return None


@lru_cache(maxsize=_CACHE_SIZE)
def _registrable_root_of_text(value: str) -> str | None:
    host = _host_of_locator(value)
    return None if host is None else _psl_root(host)


def root_of_canonical_host(host: str | None) -> str | None:
    """Registrable root of a host that is *already canonical*: the output of
    :func:`email_domain`, :func:`normalise_domain` or :func:`registrable_root`.

    A fast path for batch code that has canonicalised its values once; for anything else use
    :func:`registrable_root`, which does the cleaning too.
    """
    return None if host is None else _psl_root(host)


def registrable_root(value: object) -> str | None:
    """Return the registrable domain (eTLD+1) of a domain, URL or email-like host.

    Lower-cases; strips surrounding whitespace, the scheme, ``www.`` and any other subdomain,
    userinfo, port, path, query, fragment and trailing dots; converts internationalised names to
    punycode. ``"https://WWW.Shop.Acme.com.au:8443/x?y#z"`` → ``"acme.com.au"``,
    ``"münchen.de"`` → ``"xn--mnchen-3ya.de"``.

    Returns ``None`` for anything without a registrable domain: ``None``/non-text, empty text,
    IP addresses, a bare public suffix, unknown top-level domains, control characters,
    over-long labels or hosts. Never raises. Idempotent: a root is its own root.
    """
    if not isinstance(value, str):
        return None
    return _registrable_root_of_text(value)


def normalise_domain(value: object) -> str | None:
    """Return the canonical host of a domain, URL or email-like string, keeping subdomains.

    Same cleaning as :func:`registrable_root` but without reducing to the registrable root,
    except that leading ``www.`` labels are dropped (``www.shop.acme.com`` → ``shop.acme.com``)
    as long as what remains is still a registrable name (``www.com`` stays ``www.com``).
    ``None`` when there is no valid host. Never raises; idempotent.
    """
    if not isinstance(value, str):
        return None
    host = _host_of_locator(value)
    while host is not None and host.startswith(_WWW_PREFIX):
        shorter = host[len(_WWW_PREFIX) :]
        if _psl_root(shorter) is None:
            break
        host = shorter
    return host


def email_domain(email: object) -> str | None:
    """Return the normalised domain of an email address, or ``None`` if it is malformed.

    The domain is everything after the *last* ``@``; it is lower-cased, converted to punycode
    and stripped of trailing dots (``"Jane@Beispiel.MÜNCHEN.de."`` →
    ``"beispiel.xn--mnchen-3ya.de"``). Subdomains are kept: this is the domain as written, not
    its registrable root. Malformed means: no ``@``, an empty local part, control characters, or
    a domain that is not a valid host name (including IP literals). Never raises.
    """
    if not isinstance(email, str):
        return None
    local_part, at, host = email.strip().rpartition("@")
    if not at or not local_part or CONTROL_CHARACTERS.search(local_part):
        return None
    return canonical_host(host)


def split_additional_domains(value: object) -> list[str]:
    """Split HubSpot ``hs_additional_domains`` on ``;``, trimming and dropping empty parts.

    ``" a.com ;; b.com;"`` → ``["a.com", "b.com"]``. The parts are *not* normalised; see
    :func:`additional_domain_roots`. A list or tuple is accepted as already split. Anything else
    gives ``[]``.
    """
    if isinstance(value, str):
        parts: list[object] = list(value.split(";"))
    elif isinstance(value, list | tuple):
        parts = list(value)
    else:
        return []
    return [part.strip() for part in parts if isinstance(part, str) and part.strip()]


def additional_domain_roots(value: object) -> list[str]:
    """Return the registrable roots of ``hs_additional_domains``, de-duplicated, in input order.

    Parts without a registrable root are dropped: ``"shop.acme.com; acme.com; ;bad..x"`` →
    ``["acme.com"]``.
    """
    roots: dict[str, None] = {}
    for part in split_additional_domains(value):
        root = registrable_root(part)
        if root is not None:
            roots[root] = None
    return list(roots)


def normalise_identifier(value: object) -> str | None:
    """Normalise an exact-match identifier (``portal_id__c``, ``account_id__c``, ``custom_id``).

    Text is trimmed and kept otherwise verbatim (identifiers are compared case-sensitively);
    empty text gives ``None``. Integers become their decimal text. A float that holds an integer
    (what a nullable integer column turns into in pandas) becomes that integer's text; other
    floats, NaN, booleans and every other type give ``None``, because none of them is a
    trustworthy identifier. Never raises; idempotent.
    """
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    if isinstance(value, numbers.Integral):
        return str(int(value))
    number = float(value)
    if math.isfinite(number) and number.is_integer():
        return str(int(number))
    return None


def normalise_email(value: object) -> str | None:
    """Trim and lower-case an email address, its internationalised domain in the IDNA form the
    intake API stores (:func:`~.contact_data.normalise_email_address`), so both sides of a match
    agree; ``None`` for empty text or a non-text value.

    No other validation happens: this is the form compared *exactly* against the configured
    APAC Sales list (docs/pipeline.md), where a near-miss must simply not match.
    """
    if not isinstance(value, str):
        return None
    email = value.strip().lower()
    if email.isascii():  # nearly every address: nothing to encode
        return email or None
    try:
        return normalise_email_address(email)
    except InvalidContactData:
        return email
