"""Only the subscription's own callers get in (docs/leads.md, "API keys"): 401 without a
valid key, 403 for another subscription's data whether or not it exists, 429 past the budget."""

from __future__ import annotations

import uuid

import pytest

from morpheus_pipelines.cli import main
from tests.support.intake import Tenant, client, intake_settings, serving


@pytest.fixture
def other(database_url: str) -> Tenant:
    return Tenant(database_url)


def test_no_key_or_an_unknown_key_is_401(tenant: Tenant, service) -> None:
    base, _ = service
    forged = tenant.key[:-4] + ("AAAA" if not tenant.key.endswith("AAAA") else "BBBB")
    for session in (client(None), client("mk_not-a-key"), client(forged)):
        answer = session.post(f"{base}/v1/leads", json=tenant.lead_body())
        assert answer.status_code == 401
        assert answer.headers["WWW-Authenticate"] == "Bearer"
    assert tenant.leads() == 0


def test_a_revoked_key_is_401(tenant: Tenant, service, monkeypatch, capsys) -> None:
    base, _ = service
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", tenant.url)
    assert main(["api-key", "revoke", str(tenant.key_id)]) == 0
    assert client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body()).status_code == 401
    assert main(["api-key", "revoke", str(tenant.key_id)]) == 1  # already revoked


def test_the_cli_prints_the_key_once_and_stores_only_its_hash(
    tenant: Tenant, service, monkeypatch, capsys
) -> None:
    base, _ = service
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", tenant.url)
    assert main(["api-key", "create", "--subscription", str(tenant.subscription_id)]) == 0
    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert client(key).post(f"{base}/v1/leads", json=tenant.lead_body()).status_code == 201
    import psycopg

    with psycopg.connect(tenant.url.replace("postgresql+psycopg", "postgresql")) as conn:
        stored = [row[0] for row in conn.execute('SELECT "keyHash" FROM intake_api_keys')]
    assert key not in stored and all(len(h) == 64 for h in stored)
    unknown = str(uuid.uuid4())
    assert main(["api-key", "create", "--subscription", unknown]) == 2


def test_another_subscriptions_lead_is_403_whether_or_not_it_exists(
    tenant: Tenant, other: Tenant, service
) -> None:
    base, _ = service
    theirs = client(other.key).post(f"{base}/v1/leads", json=other.lead_body()).json()["lead_id"]
    mine = client(tenant.key)

    existing = mine.get(f"{base}/v1/leads/{theirs}")
    missing = mine.get(f"{base}/v1/leads/{uuid.uuid4()}")
    garbage = mine.get(f"{base}/v1/leads/not-a-uuid")

    assert existing.status_code == missing.status_code == garbage.status_code == 403
    assert existing.json() == missing.json() == garbage.json()
    # a key of A writing a lead for B
    assert mine.post(f"{base}/v1/leads", json=other.lead_body("x")).status_code == 403
    assert other.leads() == 1


def test_past_its_budget_a_key_gets_429_with_retry_after_and_others_do_not(
    tenant: Tenant, other: Tenant, database_url: str
) -> None:
    with serving(intake_settings(database_url, requests_per_minute=3)) as (base, _):
        noisy = client(tenant.key)
        codes = [
            noisy.post(f"{base}/v1/leads", json=tenant.lead_body(f"n-{i}")).status_code
            for i in range(4)
        ]
        limited = noisy.post(f"{base}/v1/leads", json=tenant.lead_body("n-9"))
        quiet = client(other.key).post(f"{base}/v1/leads", json=other.lead_body())
    assert codes == [201, 201, 201, 429]
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
    assert quiet.status_code == 201
    assert tenant.leads() == 3


def test_healthz_needs_no_key_and_openapi_describes_the_api(service) -> None:
    base, _ = service
    assert client(None).get(f"{base}/healthz").json() == {"status": "ok"}
    document = client(None).get(f"{base}/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert set(document["paths"]) >= {"/v1/leads", "/v1/leads/{lead_id}", "/healthz"}
    assert "LeadIn" in document["components"]["schemas"]
