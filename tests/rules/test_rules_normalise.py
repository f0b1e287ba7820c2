"""Unit tests of domain, email and identifier normalisation."""

from __future__ import annotations

import socket

import numpy as np
import pandas as pd
import pytest

from morpheus_pipelines.platform.observability.redaction import mask_email
from morpheus_pipelines.platform.text import normalise as domains
from morpheus_pipelines.platform.text.columns import (
    email_domains,
    normalise_emails,
    normalise_identifiers,
    registrable_roots,
)
from morpheus_pipelines.platform.text.normalise import (
    additional_domain_roots,
    email_domain,
    normalise_domain,
    normalise_email,
    normalise_identifier,
    registrable_root,
    root_of_canonical_host,
    split_additional_domains,
)


@pytest.mark.parametrize(
    ("value", "root"),
    [
        ("acme.com", "acme.com"),
        ("ACME.COM", "acme.com"),
        ("www.acme.com", "acme.com"),
        ("https://www.acme.com", "acme.com"),
        ("HTTP://WWW.ACME.COM/", "acme.com"),
        ("https://shop.eu.acme.com:8443/path/x?q=1#frag", "acme.com"),
        ("acme.com.", "acme.com"),
        ("acme.com..", "acme.com"),
        ("  acme.com \t\n", "acme.com"),
        ("//acme.com/about", "acme.com"),
        ("user:secret@acme.com:80", "acme.com"),
        ("jane@acme.com", "acme.com"),
        ("mailto:jane@acme.com", "acme.com"),
        ("acme.com\\about", "acme.com"),
        ("acme.com:", "acme.com"),
        # Multi-label public suffixes of the region.
        ("acme.com.au", "acme.com.au"),
        ("www.shop.acme.com.au", "acme.com.au"),
        ("acme.co.jp", "acme.co.jp"),
        ("mail.acme.co.jp", "acme.co.jp"),
        ("acme.com.cn", "acme.com.cn"),
        ("x.y.acme.com.cn", "acme.com.cn"),
        ("acme.co.kr", "acme.co.kr"),
        ("acme.com.sg", "acme.com.sg"),
        ("acme.co.nz", "acme.co.nz"),
        ("acme.co.uk", "acme.co.uk"),
        # PSL wildcard and exception rules.
        ("a.city.kawasaki.jp", "city.kawasaki.jp"),
        ("a.b.foo.ck", "b.foo.ck"),
        ("www.ck", "www.ck"),
        # PSL private suffixes keep sites on shared hosting apart.
        ("a.github.io", "a.github.io"),
        ("b.github.io", "b.github.io"),
        ("shop.acme.blogspot.com", "acme.blogspot.com"),
        # "www" is only dropped as a subdomain: www.com is a registrable name of its own.
        ("www.com", "www.com"),
    ],
)
def test_registrable_root_of_domains_and_urls(value: str, root: str) -> None:
    assert registrable_root(value) == root


@pytest.mark.parametrize(
    ("unicode_form", "punycode_form", "root"),
    [
        ("例え.jp", "xn--r8jz45g.jp", "xn--r8jz45g.jp"),
        ("münchen.de", "xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
        ("MÜNCHEN.DE", "XN--MNCHEN-3YA.DE", "xn--mnchen-3ya.de"),
        ("https://www.例え.jp/ページ", "https://www.xn--r8jz45g.jp/", "xn--r8jz45g.jp"),
        ("bücher.example.com.au", "b.xn--bcher-kva.example.com.au", "example.com.au"),
        ("acme.香港", "acme.xn--j6w193g", "acme.xn--j6w193g"),
    ],
)
def test_unicode_and_punycode_give_the_same_punycode_root(
    unicode_form: str, punycode_form: str, root: str
) -> None:
    assert registrable_root(unicode_form) == root
    assert registrable_root(punycode_form) == root


def full_width(text: str) -> str:
    """The full-width form of ASCII text, as typed with a CJK input method."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def test_cjk_full_width_forms_normalise_like_ascii() -> None:
    assert registrable_root(full_width("ACME.co.jp")) == "acme.co.jp"
    assert registrable_root("http://例え\u3002jp/") == "xn--r8jz45g.jp"  # ideographic full stop
    assert registrable_root(full_width("jane@acme.com")) == "acme.com"


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "1.2.3.4",
        "http://10.0.0.1:8080/",
        "http://[::1]/",
        "::1",
        "com.au",  # a bare public suffix
        "co.jp",
        "github.io",
        "localhost",
        "acme.local",  # not under any PSL rule
        "acme",
        "acme.com\x00",
        "ac\x07me.com",
        "acme.com:http",
        "a" * 64 + ".com",  # label longer than 63
        ".".join(["a"] * 130) + ".com",  # host longer than 253
        "acme..com",
        "-acme.com",
        "acme-.com",
        "ac me.com",
        "acme_corp.com",
        "xn--a.com",  # not a valid punycode label
        "' OR 1=1; DROP TABLE tenants; --",
        12345,
        ["acme.com"],
        {"domain": "acme.com"},
        float("nan"),
    ],
)
def test_registrable_root_is_none_for_invalid_input(value: object) -> None:
    assert registrable_root(value) is None


def test_registrable_root_is_its_own_root() -> None:
    for value in ["https://www.shop.acme.com.au/x", "例え.jp", "a.city.kawasaki.jp"]:
        root = registrable_root(value)
        assert root is not None
        assert registrable_root(root) == root
        assert root_of_canonical_host(root) == root


def test_root_of_canonical_host() -> None:
    assert root_of_canonical_host("mail.acme.co.jp") == "acme.co.jp"
    assert root_of_canonical_host("co.jp") is None
    assert root_of_canonical_host(None) is None


def test_psl_matcher_agrees_with_tldextract_on_every_rule() -> None:
    """The fast in-process PSL look-up gives tldextract's answer for every rule of the list."""
    extractor = domains.offline_public_suffix_list()
    checked = 0
    for rule in extractor.tlds:
        base = rule.lstrip("!").replace("*", "wild")
        for host in (base, f"acme.{base}", f"x.acme.{base}"):
            canonical = normalise_domain(host)
            if canonical is None:
                continue
            parts = extractor(canonical)
            expected = f"{parts.domain}.{parts.suffix}" if parts.domain and parts.suffix else None
            assert root_of_canonical_host(canonical) == expected, host
            checked += 1
    assert checked > 20_000


def test_public_suffix_list_is_read_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the Public Suffix List must not be fetched over the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    # Even an environment pointing at a remote list must not make it fetch.
    monkeypatch.setenv("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "https://publicsuffix.org/list/")
    extractor = domains.offline_public_suffix_list()
    assert extractor.suffix_list_urls == ()
    suffixes = extractor.tlds  # loads the list: bundled snapshot only
    assert "com.au" in suffixes
    assert len(suffixes) > 5_000


@pytest.mark.parametrize(
    ("value", "domain"),
    [
        ("www.shop.acme.com", "shop.acme.com"),
        ("www.www.acme.com", "acme.com"),
        ("www.com", "www.com"),
        ("www.co.jp", "www.co.jp"),
        ("HTTPS://Shop.Acme.COM.au./x", "shop.acme.com.au"),
        ("co.jp", "co.jp"),  # a valid host, though not registrable
        ("1.2.3.4", None),
        (None, None),
    ],
)
def test_normalise_domain_keeps_subdomains_but_not_www(value: object, domain: str | None) -> None:
    assert normalise_domain(value) == domain


@pytest.mark.parametrize(
    ("email", "domain"),
    [
        ("jane@acme.com", "acme.com"),
        ("Jane.Doe@ACME.COM", "acme.com"),
        ("  jane@acme.com  ", "acme.com"),
        ("jane@acme.com.", "acme.com"),
        ("jane@mail.acme.co.jp", "mail.acme.co.jp"),  # subdomains are kept
        ("jane@Beispiel.MÜNCHEN.de", "beispiel.xn--mnchen-3ya.de"),
        ("taro@例え.jp", "xn--r8jz45g.jp"),
        ('"a@b"@acme.com', "acme.com"),  # the last @ separates the domain
        ("jane@www.acme.com", "www.acme.com"),  # an email domain is taken as written
    ],
)
def test_email_domain(email: str, domain: str) -> None:
    assert email_domain(email) == domain


@pytest.mark.parametrize(
    "email",
    [
        None,
        "",
        "jane",
        "acme.com",
        "@acme.com",
        "jane@",
        "jane@acme",
        "jane@1.2.3.4",
        "jane@[10.0.0.1]",
        "jane@acme..com",
        "ja\x00ne@acme.com",
        "jane@acme.com/x",
        "jane@acme com",
        42,
    ],
)
def test_email_domain_is_none_when_malformed(email: object) -> None:
    assert email_domain(email) is None


def test_email_domains_matches_scalar_version_and_keeps_index() -> None:
    values = [
        "a@acme.com",
        None,
        "B@ACME.COM",
        "bad",
        float("nan"),
        "c@例え.jp",
        "x\x01@acme.com",
        "",
        "a@acme.com",
    ]
    series = pd.Series(values, index=[10, 11, 12, 13, 14, 15, 16, 17, 18], dtype=object)
    result = email_domains(series)
    assert result.index.tolist() == series.index.tolist()
    assert result.dtype == object
    assert result.tolist() == [email_domain(v) for v in values]
    assert result.tolist()[:3] == ["acme.com", None, "acme.com"]


def test_vectorised_helpers_on_pandas_string_dtype() -> None:
    series = pd.Series(["https://www.acme.com.au/x", None, "例え.jp"], dtype="str")
    assert registrable_roots(series).tolist() == ["acme.com.au", None, "xn--r8jz45g.jp"]
    emails = pd.Series(["J@Acme.com", None], dtype="str")
    assert email_domains(emails).tolist() == ["acme.com", None]
    assert normalise_emails(emails).tolist() == ["j@acme.com", None]


def test_vectorised_helpers_on_empty_series() -> None:
    empty = pd.Series([], dtype=object)
    assert email_domains(empty).tolist() == []
    assert registrable_roots(empty).tolist() == []
    assert normalise_identifiers(empty).tolist() == []


@pytest.mark.parametrize(
    ("value", "parts"),
    [
        ("a.com;b.com", ["a.com", "b.com"]),
        (" a.com ;; b.com;", ["a.com", "b.com"]),
        (";;", []),
        ("", []),
        (None, []),
        ("only.com", ["only.com"]),
        ("a.com, b.com", ["a.com, b.com"]),  # HubSpot separates with ';' only
        (["a.com", " ", "b.com"], ["a.com", "b.com"]),
    ],
)
def test_split_additional_domains(value: object, parts: list[str]) -> None:
    assert split_additional_domains(value) == parts


def test_additional_domain_roots_are_unique_and_ordered() -> None:
    value = (
        "shop.acme.com; https://www.beta.co.jp ;acme.com;; ACME.COM.; bad..x; 1.2.3.4; gamma.com.au"
    )
    assert additional_domain_roots(value) == ["acme.com", "beta.co.jp", "gamma.com.au"]
    assert additional_domain_roots(None) == []
    assert additional_domain_roots(";;") == []


@pytest.mark.parametrize(
    ("value", "identifier"),
    [
        ("12345", "12345"),
        ("  12345 \n", "12345"),
        ("ABC-1", "ABC-1"),
        ("abc-1", "abc-1"),  # case is kept: identifiers compare exactly
        ("", None),
        ("   ", None),
        (None, None),
        (12345, "12345"),
        (np.int64(12345), "12345"),
        (12345.0, "12345"),  # a nullable integer column read by pandas
        (12345.5, None),
        (float("nan"), None),
        (float("inf"), None),
        (True, None),
        (pd.NA, None),
        (["1"], None),
    ],
)
def test_normalise_identifier(value: object, identifier: str | None) -> None:
    assert normalise_identifier(value) == identifier


def test_normalise_identifiers_matches_scalar_version() -> None:
    values = [" 1 ", None, "", 2, 3.0, float("nan"), True, "x"]
    result = normalise_identifiers(pd.Series(values, dtype=object))
    assert result.tolist() == [normalise_identifier(v) for v in values]
    assert result.tolist() == ["1", None, None, "2", "3", None, None, "x"]


@pytest.mark.parametrize(
    ("value", "email"),
    [
        ("  Jane.Doe@Acme.COM ", "jane.doe@acme.com"),
        ("", None),
        ("   ", None),
        (None, None),
        (7, None),
    ],
)
def test_normalise_email(value: object, email: str | None) -> None:
    assert normalise_email(value) == email


@pytest.mark.parametrize(
    ("value", "masked"),
    [
        ("jane.doe@example.com", "j***@example.com"),
        ("Jane.Doe@Example.COM", "j***@example.com"),
        ("j@example.com", "j***@example.com"),
        ("taro@例え.jp", "t***@xn--r8jz45g.jp"),
        (None, "<none>"),
        ("", "<none>"),
        ("not-an-email", "***"),
        ("secret@", "***"),
        ("secret@1.2.3.4", "***"),
        ("@example.com", "***"),
    ],
)
def test_mask_email(value: object, masked: str) -> None:
    assert mask_email(value) == masked


def test_mask_email_never_reveals_more_than_the_first_character() -> None:
    masked = mask_email("supersecretname@example.com")
    assert "upersecret" not in masked
    assert masked.startswith("s***@")
