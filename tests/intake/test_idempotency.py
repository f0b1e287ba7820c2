"""Idempotency lives in the schema (docs/leads.md): duplicates, sequential or concurrent,
replay the original answer; the same key with another body is refused."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import psycopg

from tests.support.intake import Tenant, client


def test_a_retried_delivery_replays_the_original_answer(tenant: Tenant, service) -> None:
    base, _ = service
    tenant.add_rep("ana@acme.test", "101")
    session = client(tenant.key)
    first = session.post(f"{base}/v1/leads", json=tenant.lead_body())
    # the same submission, keys in another order
    body = dict(reversed(list(tenant.lead_body().items())))
    again = session.post(f"{base}/v1/leads", json=body)

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert again.json() == first.json()
    assert tenant.leads() == 1 and sum(tenant.open_leads().values()) == 1


def test_the_same_key_with_a_different_body_is_refused(tenant: Tenant, service) -> None:
    base, _ = service
    session = client(tenant.key)
    session.post(f"{base}/v1/leads", json=tenant.lead_body())
    changed = tenant.lead_body(contact={"email": "someone.else@example.com"})

    answer = session.post(f"{base}/v1/leads", json=changed)

    assert answer.status_code == 422
    assert answer.json()["error"] == "idempotency_key_reused"
    assert tenant.leads() == 1


def test_an_idempotency_key_header_takes_precedence(tenant: Tenant, service) -> None:
    base, _ = service
    session = client(tenant.key)
    one = session.post(
        f"{base}/v1/leads", json=tenant.lead_body("a"), headers={"Idempotency-Key": "k-1"}
    )
    two = session.post(
        f"{base}/v1/leads", json=tenant.lead_body("a"), headers={"Idempotency-Key": "k-2"}
    )
    assert (one.status_code, two.status_code) == (201, 201)
    assert tenant.leads() == 2


def test_fifty_concurrent_deliveries_create_one_lead_and_fifty_identical_answers(
    tenant: Tenant, service
) -> None:
    base, _ = service
    for i in range(3):
        tenant.add_rep(f"rep{i}@acme.test", str(400 + i))
    start = threading.Barrier(50)

    def deliver(_: int) -> tuple[int, dict, str | None]:
        session = client(tenant.key)
        start.wait()
        answer = session.post(f"{base}/v1/leads", json=tenant.lead_body("burst"))
        return answer.status_code, answer.json(), answer.headers.get("Idempotent-Replayed")

    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(deliver, range(50)))

    assert sorted(status for status, _, _ in answers) == [200] * 49 + [201]
    assert len({str(body) for _, body, _ in answers}) == 1
    assert [replayed for status, _, replayed in answers if status == 200] == ["true"] * 49
    assert tenant.leads() == 1
    assert sum(tenant.open_leads().values()) == 1  # the losers' load charges rolled back


def test_a_read_then_insert_check_lets_concurrent_duplicates_through(database_url: str) -> None:
    """Why the guarantee is a UNIQUE constraint: the application-level variant, run with the
    same 50 concurrent deliveries, stores the lead many times."""
    url = database_url.replace("postgresql+psycopg", "postgresql")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE naive_leads (id serial PRIMARY KEY, key text NOT NULL)")
    all_checked = threading.Barrier(50)

    def naive_deliver(_: int) -> None:
        with psycopg.connect(url) as conn:
            seen = conn.execute("SELECT 1 FROM naive_leads WHERE key = 'web-form:burst'").fetchone()
            all_checked.wait()  # every delivery has looked before any has written
            if seen is None:
                conn.execute("INSERT INTO naive_leads (key) VALUES ('web-form:burst')")

    with ThreadPoolExecutor(max_workers=50) as pool:
        list(pool.map(naive_deliver, range(50)))
    with psycopg.connect(url) as conn:
        stored = conn.execute("SELECT count(*) FROM naive_leads").fetchone()[0]
    assert stored == 50
