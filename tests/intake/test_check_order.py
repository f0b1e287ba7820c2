"""Every ``/v1/`` endpoint runs the request checks of ``crm/api/dependencies.py`` in the same
order: the address's budget of failed authentications, the API key, the key's request
budget, the ``Idempotency-Key`` header, then the body; a request failing several checks gets
the answer of the first (docs/security.md)."""

from __future__ import annotations

import uuid

import pytest

from tests.support.intake import Tenant, client, intake_settings, problem_of, serving

LEAD = str(uuid.uuid4())
ENDPOINTS = [
    ("POST", "/v1/leads"),
    ("GET", f"/v1/leads/{LEAD}"),
    ("GET", f"/v1/leads/{LEAD}/timeline"),
    ("GET", f"/v1/leads/{LEAD}/whatsapp-window"),
    ("POST", "/v1/activities"),
    ("POST", "/v1/messages"),
]
# Wrong on every count a later check would look at.
MALFORMED = {"data": b"{not json", "headers": {"Idempotency-Key": "k" * 201}}


def _call(key: str | None, base: str, method: str, path: str):
    return client(key).request(method, f"{base}{path}", params={"limit": "0"}, **MALFORMED)


def test_without_a_key_nothing_else_is_looked_at(service) -> None:
    base, _ = service
    for method, path in ENDPOINTS:
        answer = _call(None, base, method, path)
        problem_of(answer, 401, "missing_api_key")


def test_the_failed_authentication_budget_comes_before_the_key(
    tenant: Tenant, database_url: str
) -> None:
    with serving(intake_settings(database_url, auth_failures_per_minute=1)) as (base, _):
        assert client("mk_nope").get(f"{base}/v1/leads/{LEAD}").status_code == 401
        for method, path in ENDPOINTS:
            answer = _call(tenant.key, base, method, path)
            problem_of(answer, 429, "too_many_failed_authentications")


def test_the_request_budget_comes_before_the_request_is_read(
    tenant: Tenant, database_url: str
) -> None:
    with serving(intake_settings(database_url, requests_per_minute=1)) as (base, _):
        assert client(tenant.key).get(f"{base}/healthz").status_code == 200  # takes nothing
        assert client(tenant.key).get(f"{base}/v1/leads/{LEAD}").status_code == 403
        for method, path in ENDPOINTS:
            answer = _call(tenant.key, base, method, path)
            problem_of(answer, 429, "rate_limited")
            assert int(answer.headers["Retry-After"]) >= 1


@pytest.mark.parametrize("path", ["/v1/leads", "/v1/messages"])
def test_the_idempotency_key_comes_before_the_body(tenant: Tenant, service, path: str) -> None:
    base, _ = service
    answer = _call(tenant.key, base, "POST", path)
    assert answer.status_code == 422
    assert answer.json()["fields"] == [
        {"field": "Idempotency-Key", "message": "1 to 200 characters"}
    ]


@pytest.mark.parametrize("path", ["/v1/leads", "/v1/activities", "/v1/messages"])
def test_the_body_is_read_before_whose_it_is_is_checked(tenant: Tenant, service, path) -> None:
    base, _ = service
    answer = client(tenant.key).post(
        f"{base}{path}", data=b"{not json", headers={"Idempotency-Key": "k-1"}
    )
    assert answer.status_code == 422
    assert answer.json()["fields"] == [{"field": "body", "message": "the body is not valid JSON"}]


@pytest.mark.parametrize("tail", ["", "/timeline", "/whatsapp-window"])
def test_a_lead_id_that_is_not_one_is_403_before_the_query_is_read(
    tenant: Tenant, service, tail: str
) -> None:
    base, _ = service
    answer = client(tenant.key).get(f"{base}/v1/leads/not-a-uuid{tail}", params={"limit": "0"})
    assert problem_of(answer, 403, "forbidden")["detail"] == "no such lead for this API key"
