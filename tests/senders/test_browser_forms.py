"""Browser forms over real HTTP: a publishable key creates leads only, only from its origins,
with the CORS preflight answered for those origins alone, a honeypot, and a budget per
origin; secret keys keep everything else."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from morpheus_pipelines.crm.api.server import create_api_key
from tests.support.intake import Tenant, client, intake_settings, serving

ORIGIN = "https://forms.acme.test"
ELSEWHERE = "https://evil.example"


@pytest.fixture
def browser(database_url: str) -> Iterator[tuple[str, Tenant, str]]:
    """The service (a budget of 5 leads a minute per origin), a tenant with a rep, and a
    publishable key for ``ORIGIN``."""
    tenant = Tenant(database_url)
    tenant.add_rep("rep@acme.test", "301")
    _, key = create_api_key(database_url, tenant.subscription_id, "form", origins=(ORIGIN,))
    with serving(intake_settings(database_url, origin_requests_per_minute=5)) as (base, _):
        yield base, tenant, key


def _post(base: str, key: str, body: dict[str, Any], origin: str | None = ORIGIN):
    headers = {"Authorization": f"Bearer {key}"} | ({"Origin": origin} if origin else {})
    return requests.post(f"{base}/v1/leads", json=body, headers=headers, timeout=10)


def _preflight(base: str, origin: str, method: str = "POST", path: str = "/v1/leads"):
    headers = {"Origin": origin, "Access-Control-Request-Method": method}
    return requests.options(f"{base}{path}", headers=headers, timeout=10)


def test_the_preflight_is_answered_for_a_publishable_keys_origin_only(browser) -> None:
    base, _, _ = browser
    allowed = _preflight(base, ORIGIN)
    assert allowed.status_code == 204
    assert allowed.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert allowed.headers["Access-Control-Allow-Methods"] == "POST"
    assert "Authorization" in allowed.headers["Access-Control-Allow-Headers"]
    for refused in (_preflight(base, ELSEWHERE), _preflight(base, ORIGIN, method="GET")):
        assert refused.status_code == 403
        assert "Access-Control-Allow-Origin" not in refused.headers


def test_a_publishable_key_creates_a_lead_from_its_origin(browser) -> None:
    base, tenant, key = browser
    answer = _post(base, key, tenant.lead_body("form-1"))
    assert answer.status_code == 201, answer.text
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert answer.json()["owner"]["hubspot_owner_id"] == "301"


def test_a_publishable_key_from_another_origin_or_none_is_refused(browser) -> None:
    base, tenant, key = browser
    for origin in (ELSEWHERE, None):
        answer = _post(base, key, tenant.lead_body("form-2"), origin=origin)
        assert answer.status_code == 403
        assert answer.json()["error"] == "origin_not_allowed"
        assert "Access-Control-Allow-Origin" not in answer.headers
    assert tenant.leads() == 0


def test_a_publishable_key_can_do_nothing_but_create_leads(browser) -> None:
    base, tenant, key = browser
    lead_id = _post(base, key, tenant.lead_body("form-3")).json()["lead_id"]
    headers = {"Authorization": f"Bearer {key}", "Origin": ORIGIN}
    reads = [
        requests.get(f"{base}/v1/leads", headers=headers, timeout=10),
        requests.get(f"{base}/v1/leads/{lead_id}", headers=headers, timeout=10),
        requests.get(f"{base}/v1/leads/{lead_id}/timeline", headers=headers, timeout=10),
        requests.post(
            f"{base}/v1/messages",
            json={"lead_id": lead_id, "channel": "email", "kind": "free_form", "body": "hi"},
            headers=headers | {"Idempotency-Key": "m-1"},
            timeout=10,
        ),
    ]
    assert [r.status_code for r in reads] == [403, 403, 403, 403]
    assert {r.json()["error"] for r in reads} == {"publishable_key_cannot"}
    # The tenant's secret key reads the same lead: the 403s were the key's kind.
    assert client(tenant.key).get(f"{base}/v1/leads/{lead_id}").status_code == 200


def test_a_filled_honeypot_stores_nothing(browser) -> None:
    base, tenant, key = browser
    answer = _post(base, key, tenant.lead_body("bot-1") | {"honeypot": "http://spam.example"})
    assert answer.status_code == 422
    assert [f["field"] for f in answer.json()["fields"]] == ["honeypot"]
    assert _post(base, key, tenant.lead_body("human-1") | {"honeypot": ""}).status_code == 201
    assert tenant.leads() == 1


def test_each_origin_has_its_own_budget(browser, database_url: str) -> None:
    base, tenant, key = browser
    answers = [_post(base, key, tenant.lead_body(f"burst-{n}")) for n in range(6)]
    assert [a.status_code for a in answers] == [201] * 5 + [429]
    assert '"origin";q=5;w=60' in answers[-1].headers["RateLimit-Policy"]
    assert answers[-1].json()["error"] == "rate_limited" and "Retry-After" in answers[-1].headers
    # The secret key of the same tenant, from a server, is not held by the origin's budget.
    assert (
        client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body("srv")).status_code == 201
    )
