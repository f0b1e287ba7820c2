"""The Graph API's error bodies, and the WhatsApp Cloud API's variant of them.

Every Graph error is ``{"error": {"message", "type", "code", "error_subcode"?,
"fbtrace_id"}}``; the Cloud API adds ``error_data: {"messaging_product": "whatsapp",
"details"}`` and puts the code and its title in the message: ``"(#131047) Re-engagement
message"``. Clients are meant to branch on ``code`` (and ``error_data.details``), never on
the message text.
"""

from __future__ import annotations

import secrets
import string
from typing import Any

from .._messages import Response

__all__ = [
    "CLOUD_API_CODES",
    "cloud_error",
    "fbtrace_id",
    "graph_error",
    "nonexisting_object",
]

_TRACE_ALPHABET = string.ascii_letters + string.digits + "_-"

# Cloud API code -> (title, HTTP status) for the errors the emulator answers or injects.
CLOUD_API_CODES: dict[int, tuple[str, int]] = {
    1: ("API Unknown", 400),
    2: ("API Service", 503),
    100: ("Invalid parameter", 400),
    130429: ("Rate limit hit", 429),
    131000: ("Something went wrong", 500),
    131008: ("Required parameter is missing", 400),
    131026: ("Message undeliverable", 400),
    131047: ("Re-engagement message", 400),
    132001: ("Template name does not exist in the translation", 404),
}


def fbtrace_id() -> str:
    """A fresh trace id of the kind Graph puts in every error (11 url-safe characters)."""
    return "".join(secrets.choice(_TRACE_ALPHABET) for _ in range(11))


def graph_error(
    message: str,
    *,
    code: int,
    type: str = "OAuthException",
    subcode: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A Graph API error body."""
    error: dict[str, Any] = {"message": message, "type": type, "code": code}
    if subcode is not None:
        error["error_subcode"] = subcode
    error.update(extra)
    error["fbtrace_id"] = fbtrace_id()
    return {"error": error}


def cloud_error(code: int, details: str, *, subcode: int | None = None) -> Response:
    """A Cloud API error response: its title in the message, ``details`` in ``error_data``."""
    title, status = CLOUD_API_CODES[code]
    body = graph_error(
        f"(#{code}) {title}",
        code=code,
        subcode=subcode,
        error_data={"messaging_product": "whatsapp", "details": details},
    )
    return Response(status, body)


def nonexisting_object(object_id: str, method: str) -> Response:
    """Graph's answer for an id that does not exist (or the token may not see): 400, code 100,
    subcode 33."""
    message = (
        f"Unsupported {method.lower()} request. Object with ID '{object_id}' does not exist, "
        "cannot be loaded due to missing permissions, or does not support this operation. "
        "Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api"
    )
    return Response(400, graph_error(message, code=100, type="GraphMethodException", subcode=33))
