"""What every client of Meta's Graph API shares: the base URL and version, and a session that
carries the access token in its ``Authorization`` header only — never in a URL that could be
logged — with the token registered with the redaction and kept out of the client's repr."""

from __future__ import annotations

from typing import Self
from urllib.parse import quote

import requests

from morpheus_pipelines.platform.observability.redaction import register_secret

DEFAULT_BASE_URL = "https://graph.facebook.com"
DEFAULT_API_VERSION = "v21.0"


class GraphApi:
    def __init__(
        self,
        token: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_version: str = DEFAULT_API_VERSION,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_version = api_version.strip("/")
        register_secret(token)
        self._session = requests.Session()
        self._session.headers["Authorization"] = f"Bearer {token}"
        self._session.headers["Accept"] = "application/json"

    def url(self, *path: str) -> str:
        """``{base}/{version}/{path…}``, each part quoted as one path segment."""
        parts = "/".join(quote(part, safe="") for part in path)
        return f"{self.base_url}/{self.api_version}/{parts}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r}, {self.api_version!r}, token=<set>)"

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
