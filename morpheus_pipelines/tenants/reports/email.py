"""A report as an email (docs/reports.md, "Delivery"): the report's own HTML page as the body,
each chart it embeds as a ``data:`` URI moved into an inline ``image/*`` part referenced by
``cid:`` (``multipart/related``; mail clients block or strip ``data:`` images), with a short
plain-text alternative that links the report."""

from __future__ import annotations

import base64
import hashlib
import re
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

_DATA_IMAGE = re.compile(
    r"""src=(["'])data:image/(png|jpeg|gif|svg\+xml);base64,([A-Za-z0-9+/=\s]+)\1"""
)


def inline_images(html: str, domain: str) -> tuple[str, list[tuple[str, str, bytes]]]:
    """``html`` with each embedded image replaced by ``cid:…``; the images as
    ``(content id, subtype, bytes)`` in page order."""
    images: list[tuple[str, str, bytes]] = []

    def replace(match: re.Match[str]) -> str:
        quote, subtype, encoded = match.groups()
        data = base64.b64decode("".join(encoded.split()))
        content_id = f"chart{len(images) + 1}.{hashlib.sha256(data).hexdigest()[:16]}@{domain}"
        images.append((content_id, subtype, data))
        return f"src={quote}cid:{content_id}{quote}"

    return _DATA_IMAGE.sub(replace, html), images


def report_email(
    *,
    from_address: str,
    to: str,
    subject: str,
    html: str,
    text: str,
    message_id: str | None = None,
) -> EmailMessage:
    """``multipart/alternative``: ``text`` and ``multipart/related`` (the HTML and its
    charts)."""
    domain = from_address.rpartition("@")[2].strip("> ") or "morpheus.invalid"
    body, images = inline_images(html, domain)
    mail = EmailMessage()
    mail["From"] = from_address
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = formatdate(usegmt=True)
    mail["Message-ID"] = message_id or make_msgid(domain=domain)
    mail.set_content(text)
    mail.add_alternative(body, subtype="html")
    html_part = mail.get_payload()[-1]
    for content_id, subtype, data in images:
        html_part.add_related(
            data,
            maintype="image",
            subtype=subtype,
            cid=f"<{content_id}>",
            disposition="inline",
            filename=f"{content_id.split('.', 1)[0]}.{subtype.split('+', 1)[0]}",
        )
    return mail
