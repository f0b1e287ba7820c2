"""Bad input gets a clear 4xx naming the field and nothing is stored (docs/leads.md)."""

from __future__ import annotations

import json

import pytest

from tests.support.events import EventLines
from tests.support.intake import Tenant, client


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"source": 7}, "source"),
        ({"source": ""}, "source"),
        ({"campaign_ids": "spring"}, "campaign_ids"),
        ({"contact": {"email": "not-an-email"}}, "contact.email"),
        ({"contact": {"phone": "9123 4567"}}, "contact.phone"),
        ({"contact": {"emial": "typo@example.com"}}, "contact.emial"),
        ({"subscription_id": "acme"}, "subscription_id"),
        ({"unexpected": True}, "unexpected"),
    ],
)
def test_a_wrong_field_is_named_and_nothing_is_stored(
    tenant: Tenant, service, change: dict, field: str
) -> None:
    base, _ = service
    answer = client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body() | change)
    assert answer.status_code == 422
    assert answer.json()["error"] == "invalid_request"
    assert field in [f["field"] for f in answer.json()["fields"]]
    assert tenant.leads() == 0


def test_missing_fields_are_all_named(tenant: Tenant, service) -> None:
    base, _ = service
    answer = client(tenant.key).post(f"{base}/v1/leads", json={"source": "web-form"})
    named = {f["field"] for f in answer.json()["fields"]}
    assert answer.status_code == 422
    assert named == {"subscription_id", "source_submission_id", "contact"}


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b"", "\u00e9".encode("latin-1")])
def test_a_body_that_is_not_a_json_object_is_422(tenant: Tenant, service, raw: bytes) -> None:
    base, _ = service
    answer = client(tenant.key).post(
        f"{base}/v1/leads", data=raw, headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 422
    assert answer.json()["fields"][0]["field"] == "body"


def test_an_oversize_body_is_413(tenant: Tenant, service) -> None:
    base, _ = service
    body = tenant.lead_body(payload={"notes": "x" * 70_000})
    answer = client(tenant.key).post(f"{base}/v1/leads", json=body)
    assert answer.status_code == 413 and answer.json()["limit_bytes"] == 65536
    assert tenant.leads() == 0


def test_odd_but_valid_formats_are_normalised(tenant: Tenant, service) -> None:
    base, _ = service
    body = tenant.lead_body(
        contact={"email": "  Mailto:Ana@Example.COM ", "phone": "0065 (9123)-4567"}
    )
    lead_id = client(tenant.key).post(f"{base}/v1/leads", json=body).json()["lead_id"]
    shown = client(tenant.key).get(f"{base}/v1/leads/{lead_id}").json()
    assert shown["contact"]["email"] == "ana@example.com"
    assert shown["contact"]["phone"] == "+6591234567"


def test_logs_carry_no_email_or_phone(tenant: Tenant, service, event_lines: EventLines) -> None:
    base, _ = service
    client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body())
    text = "\n".join(event_lines.lines)
    assert "buyer@example.com" not in text.lower() and "91234567" not in text
    assert tenant.key not in text
    [created] = event_lines.events("lead_created")
    assert created["contact_email"] == "b***@example.com"
    requests_logged = event_lines.events("http_request")
    assert {(r["method"], r["path"], r["status"]) for r in requests_logged} == {
        ("POST", "/v1/leads", 201)
    }
    assert json.dumps(requests_logged).count("duration_ms") == 1
