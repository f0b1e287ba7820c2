"""Keeping secrets and customer emails out of everything the product writes.

* every value registered with :func:`register_secret` (the HubSpot token) is replaced by
  ``***`` wherever it appears;
* :func:`mask_email` masks one address (``j***@acme.com``) and :func:`mask_emails` any
  email-shaped text the same way: the one rule used by event lines and reports alike;
  :func:`mask_phone` masks a phone number (``+65******67``).
"""

from __future__ import annotations

import math
import re
import threading

from morpheus_pipelines.platform.text.normalise import email_domain, normalise_email

# Every registered secret, longest first (no partial leftovers of a secret that contains
# another); sorted once per new secret, replaced whole so that readers need no lock.
_longest_first: tuple[str, ...] = ()
# Anything shaped like an email address that reaches a line through a free-text field.
EMAIL_PATTERN = re.compile(
    r"[^\s\"'<>@,;:()\[\]]+@[A-Za-z0-9\-.\u00a0-\uffff]+\.[A-Za-z\u00a0-\uffff]{2,}"
)
_secrets_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Never let ``value`` appear in an event line (no-op for empty or very short values)."""
    global _longest_first
    if value and len(value) >= 4:
        with _secrets_lock:
            _longest_first = tuple(sorted({*_longest_first, value}, key=len, reverse=True))


def _registered_secrets() -> tuple[str, ...]:
    return _longest_first


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    for secret in _registered_secrets():
        text = text.replace(secret, "***")
    return text


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` for UTF-8 bytes."""
    for secret in _registered_secrets():
        data = data.replace(secret.encode(), b"***")
    return data


def mask_email(value: object) -> str:
    """Return an email address fit for logs: ``"Jane.Doe@Example.com"`` → ``"j***@example.com"``.

    Only the first character of the local part and the normalised domain are shown. Anything
    that is not a well-formed email gives ``"***"``; a missing value gives ``"<none>"``. Never
    raises and never returns more of the local part than its first character.
    """
    email = normalise_email(value)
    if email is None:
        return "<none>"
    domain = email_domain(email)
    local_part = email.rpartition("@")[0]
    if domain is None or not local_part:
        return "***"
    return f"{local_part[0]}***@{domain}"


def mask_phone(value: object) -> str:
    """A phone number fit for logs: its country code's first digits and its last two
    (``"+6591234567"`` → ``"+65******67"``); ``"<none>"`` when missing, ``"***"`` when too
    short to mask."""
    if value is None:
        return "<none>"
    digits = "".join(ch for ch in str(value) if ch.isdigit())
    if len(digits) < 7:
        return "***"
    return f"+{digits[:2]}{'*' * (len(digits) - 4)}{digits[-2:]}"


def mask_emails(value: object) -> str:
    """``value`` as text with every email-shaped substring masked (``j***@acme.com``); a
    missing value (``None``, NaN) is the empty text."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = str(value)
    if "@" not in text:  # nothing email-shaped: spare every line without one the regex scan
        return text
    return EMAIL_PATTERN.sub(lambda m: mask_email(m.group(0)), text)


def redacted_traceback(exc: BaseException) -> str:
    """Where ``exc`` was raised, for a debug line: each exception's type and frames
    (``file:line in function``), never its message or a frame's values, which can carry SQL
    parameters, contact details or a token."""
    import traceback

    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = traceback.extract_tb(current.__traceback__)
        where = " < ".join(f"{f.filename}:{f.lineno} in {f.name}" for f in reversed(frames))
        parts.append(f"{type(current).__module__}.{type(current).__qualname__} at {where}")
        current = current.__cause__ or current.__context__
    return " | caused by ".join(parts)
