"""Meta's Graph API clients keep the access token in the Authorization header alone: out of
their repr, out of the URL, and masked by the redaction wherever it is quoted."""

from __future__ import annotations

import pytest

from morpheus_pipelines.platform.clients.graph_api import GraphApi
from morpheus_pipelines.platform.clients.meta_graph import MetaGraphClient
from morpheus_pipelines.platform.clients.whatsapp import WhatsAppClient
from morpheus_pipelines.platform.observability.redaction import redact


@pytest.mark.parametrize(
    "build",
    [
        lambda token: MetaGraphClient("http://127.0.0.1:9", token, timeout=1),
        lambda token: WhatsAppClient(token, base_url="http://127.0.0.1:9"),
    ],
    ids=["lead answers", "whatsapp"],
)
def test_the_token_is_in_the_header_only(build) -> None:
    token = "EAAG-graph-token-8f3a1c"
    with build(token) as client:
        assert token not in repr(client)
        assert client._session.headers["Authorization"] == f"Bearer {token}"
        assert token not in client.url("LG-1")
    assert token not in redact(f"the token was {token}")


def test_each_path_part_is_one_segment() -> None:
    with GraphApi("t", base_url="https://graph.example/", api_version="/v21.0/") as graph:
        assert graph.url("../me", "messages") == "https://graph.example/v21.0/..%2Fme/messages"
