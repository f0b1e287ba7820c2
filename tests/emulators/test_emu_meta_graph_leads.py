"""Lead Ads lead retrieval over real HTTP: found, unknown, fields, and the token checks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import requests

from morpheus_pipelines.devtools.emulators import MetaGraphEmulator
from tests.support.meta_graph import META_TOKEN

LEAD_ID = "900000000000001"
FIELD_DATA = {
    "email": "mei.tan@example.com",
    "phone_number": "+6591234567",
    "full_name": "Mei Tan",
}


@pytest.fixture
def seeded(meta: MetaGraphEmulator) -> MetaGraphEmulator:
    meta.add_lead(
        LEAD_ID,
        page_id="555000111",
        form_id="777000111",
        ad_id="238000111",
        field_data=FIELD_DATA,
        created_time=datetime(2026, 7, 1, 8, 49, 14, tzinfo=UTC),
    )
    return meta


def test_a_lead_is_served_with_graph_s_default_fields(
    seeded: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    resp = meta_session.get(seeded.url(f"/v21.0/{LEAD_ID}"))
    assert resp.status_code == 200
    assert resp.json() == {
        "created_time": "2026-07-01T08:49:14+0000",
        "id": LEAD_ID,
        "field_data": [
            {"name": "email", "values": ["mei.tan@example.com"]},
            {"name": "phone_number", "values": ["+6591234567"]},
            {"name": "full_name", "values": ["Mei Tan"]},
        ],
    }


def test_fields_selects_exactly_those_and_the_id(
    seeded: MetaGraphEmulator, meta_session: requests.Session
) -> None:
    resp = meta_session.get(
        seeded.url(f"/v19.0/{LEAD_ID}"), params={"fields": "ad_id,form_id,created_time"}
    )
    assert resp.status_code == 200
    assert resp.json() == {
        "ad_id": "238000111",
        "form_id": "777000111",
        "created_time": "2026-07-01T08:49:14+0000",
        "id": LEAD_ID,
    }


def test_an_organic_lead_has_no_ad_id(meta: MetaGraphEmulator, meta_session) -> None:
    meta.add_lead("42", page_id="1", form_id="2", field_data=[{"name": "email", "values": ["x"]}])
    body = meta_session.get(meta.url("/v21.0/42"), params={"fields": "ad_id,is_organic"}).json()
    assert body == {"is_organic": True, "id": "42"}


def test_an_unknown_field_is_code_100(seeded: MetaGraphEmulator, meta_session) -> None:
    resp = meta_session.get(seeded.url(f"/v21.0/{LEAD_ID}"), params={"fields": "email"})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["code"] == 100
    assert "nonexisting field (email)" in error["message"]


def test_an_unknown_lead_is_graph_s_nonexisting_object(
    seeded: MetaGraphEmulator, meta_session
) -> None:
    resp = meta_session.get(seeded.url("/v21.0/123456"))
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert {k: error[k] for k in ("type", "code", "error_subcode")} == {
        "type": "GraphMethodException",
        "code": 100,
        "error_subcode": 33,
    }
    assert "Object with ID '123456' does not exist" in error["message"]
    assert error["fbtrace_id"]


def test_the_token_may_come_as_a_query_parameter_and_is_not_logged(
    seeded: MetaGraphEmulator,
) -> None:
    resp = requests.get(seeded.url(f"/v21.0/{LEAD_ID}"), params={"access_token": META_TOKEN})
    assert resp.status_code == 200
    assert resp.json()["id"] == LEAD_ID
    record = seeded.log.last("lead")
    assert record.query == {"access_token": "<redacted>"}
    assert META_TOKEN not in repr(seeded.log.entries())


def test_a_wrong_token_is_oauth_exception_190(seeded: MetaGraphEmulator) -> None:
    resp = requests.get(
        seeded.url(f"/v21.0/{LEAD_ID}"), headers={"Authorization": "Bearer not-the-token"}
    )
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert (error["type"], error["code"]) == ("OAuthException", 190)
    assert "invalid_token" in resp.headers["WWW-Authenticate"]
    assert "field_data" not in resp.text


def test_no_token_is_oauth_exception_104(seeded: MetaGraphEmulator) -> None:
    resp = requests.get(seeded.url(f"/v21.0/{LEAD_ID}"))
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert (error["type"], error["code"]) == ("OAuthException", 104)


def test_a_path_without_a_version_is_not_routed(seeded: MetaGraphEmulator, meta_session) -> None:
    resp = meta_session.get(seeded.url(f"/{LEAD_ID}"))
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == 2500
    assert seeded.log.last().endpoint == "unknown"


def test_a_removed_lead_is_no_longer_served(seeded: MetaGraphEmulator, meta_session) -> None:
    seeded.remove_lead(LEAD_ID)
    assert seeded.lead(LEAD_ID) is None
    assert meta_session.get(seeded.url(f"/v21.0/{LEAD_ID}")).status_code == 400
