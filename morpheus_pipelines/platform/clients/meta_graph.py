"""Meta's Graph API, the part lead intake reads: a Lead Ads lead's answers
(``GET /{version}/{leadgen_id}``) (docs/senders.md, "Meta").

One attempt per call: the retrieval's retries live in ``lead_contact_retrievals`` with a
back-off across runs, so a Graph API that is down for an hour costs a few requests, not a
blocked worker. The token is handled as every Graph client handles it
(:class:`~.graph_api.GraphApi`).
"""

from __future__ import annotations

from typing import Any

from morpheus_pipelines.platform.clients.graph_api import (
    DEFAULT_API_VERSION,
    DEFAULT_BASE_URL,
    GraphApi,
)
from morpheus_pipelines.platform.clients.http import TRANSIENT_TRANSPORT_ERRORS

__all__ = ["DEFAULT_API_VERSION", "DEFAULT_BASE_URL", "GraphError", "MetaGraphClient"]
LEAD_FIELDS = "id,created_time,ad_id,form_id,field_data,is_organic"


class GraphError(RuntimeError):
    """A call the Graph API did not answer with the object: ``transient`` when a later
    attempt may succeed (no answer, 5xx, throttling), else the object is not to be had (an
    unknown or deleted lead, a token without the permission)."""

    def __init__(self, message: str, *, transient: bool, code: str | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.code = code


# Graph error codes that are throttling or a temporary fault, whatever the HTTP status.
_TRANSIENT_CODES = frozenset({"1", "2", "4", "17", "32", "341", "613"})


class MetaGraphClient(GraphApi):
    """Reads Lead Ads leads with a system user's access token."""

    def __init__(
        self,
        base_url: str,
        access_token: str,
        api_version: str = DEFAULT_API_VERSION,
        timeout: float = 10.0,
    ) -> None:
        super().__init__(access_token, base_url=base_url, api_version=api_version)
        self.timeout = timeout

    def lead(self, leadgen_id: str) -> dict[str, Any]:
        """The lead's object (``field_data`` holds its answers); :class:`GraphError` else."""
        url = self.url(leadgen_id)
        try:
            answer = self._session.get(url, params={"fields": LEAD_FIELDS}, timeout=self.timeout)
        except TRANSIENT_TRANSPORT_ERRORS as exc:
            raise GraphError(f"the Graph API did not answer: {type(exc).__name__}",
                             transient=True) from None  # fmt: skip
        try:
            document = answer.json()
        except ValueError:
            document = None
        if answer.status_code == 200 and isinstance(document, dict):
            return document
        error = document.get("error") if isinstance(document, dict) else None
        error = error if isinstance(error, dict) else {}
        code = None if error.get("code") is None else str(error["code"])
        message = str(error.get("message") or f"HTTP {answer.status_code}")[:300]
        transient = (
            answer.status_code >= 500 or answer.status_code == 429 or code in _TRANSIENT_CODES
        )
        raise GraphError(
            f"Graph API {answer.status_code}: {message}", transient=transient, code=code
        )
