"""The web origins a publishable key may be used from (docs/leads.md, "Browser forms"), as
``morpheus api-key create --publishable --origin …`` reads them and as a browser's ``Origin``
header is compared with them.

An origin is a scheme, a host and a port, nothing else (``https://forms.acme.com``,
``https://acme.com:8443``): a path, a query, a user or a wildcard is refused, because the
browser never sends one and a wildcard would let any site post as the advertiser. ``http`` is
accepted only for ``localhost`` (a developer's page); everything else must be ``https``. The
stored form is lower-case with the default port dropped, which is how browsers write it.

Pure: no HTTP, no database.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from morpheus_pipelines.platform.text.normalise import canonical_host

_DEFAULT_PORTS = {"https": 443, "http": 80}
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})


class OriginRefused(ValueError):
    """Not an origin a key may name; the message says why."""


def normalise_origin(text: str) -> str:
    """``text`` as the browser would send it in ``Origin``, or :class:`OriginRefused`."""
    stripped = text.strip()
    if "*" in stripped:
        raise OriginRefused(f"{text!r}: wildcards are not allowed; name each origin")
    try:
        parts = urlsplit(stripped)
        port = parts.port
    except ValueError:
        raise OriginRefused(f"{text!r} is not an origin (scheme://host[:port])") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise OriginRefused(f"{text!r} is not an origin (scheme://host[:port])")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise OriginRefused(f"{text!r}: an origin has no user, query or fragment")
    if parts.path not in ("", "/"):
        raise OriginRefused(f"{text!r}: an origin has no path")
    host = parts.hostname.lower()
    local = host in _LOCAL_HOSTS or f"[{host}]" in _LOCAL_HOSTS
    if not local:
        host = canonical_host(host) or ""
        if not host:
            raise OriginRefused(f"{text!r}: {parts.hostname!r} is not a host name")
    if scheme == "http" and not local:
        raise OriginRefused(f"{text!r}: only https origins (http only for localhost)")
    if ":" in host:
        host = f"[{host}]"
    shown_port = "" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}"
    return f"{scheme}://{host}{shown_port}"


def origin_header(value: str | None) -> str | None:
    """A request's ``Origin`` header in the stored form, ``None`` when absent or unreadable
    (``null``, a sandboxed page's)."""
    if not value or value == "null":
        return None
    try:
        return normalise_origin(value)
    except OriginRefused:
        return None
