"""Guessing keys is throttled per client address and costs the database nothing
(docs/security.md, "Authentication")."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event

from morpheus_pipelines.crm.api.keys import new_key
from tests.support.intake import Tenant, client, intake_settings, problem_of, serving


def _unknown_key() -> str:
    return new_key(uuid.uuid4())


def test_past_its_budget_of_failures_an_address_gets_429_before_any_key_is_looked_at(
    tenant: Tenant, database_url: str
) -> None:
    with serving(intake_settings(database_url, auth_failures_per_minute=5)) as (base, _):
        answers = [
            client(_unknown_key()).post(f"{base}/v1/leads", json=tenant.lead_body())
            for _ in range(5)
        ]
        answers.append(client(None).post(f"{base}/v1/leads", json=tenant.lead_body()))
        # Refused even with the right key: the address is not heard until it waits.
        answers.append(client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body()))
    assert [a.status_code for a in answers] == [401] * 5 + [429, 429]
    problem_of(answers[-1], 429, "too_many_failed_authentications")
    assert int(answers[-1].headers["Retry-After"]) >= 1
    assert tenant.leads() == 0


def test_successful_requests_do_not_spend_the_failure_budget(
    tenant: Tenant, database_url: str
) -> None:
    with serving(intake_settings(database_url, auth_failures_per_minute=2)) as (base, _):
        good = [
            client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body(f"s-{i}"))
            for i in range(5)
        ]
    assert [a.status_code for a in good] == [201] * 5


@pytest.fixture
def counted(database_url: str) -> Iterator[tuple[str, list[str]]]:
    """The service with a statement counter on its own engine."""
    with serving(intake_settings(database_url, auth_failures_per_minute=10_000)) as (base, app):
        statements: list[str] = []

        def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            # The routing listener's thread loads the owner cache in the background, whatever
            # the requests: not a request's query.
            if threading.current_thread().name != "routing-listener":
                statements.append(statement)

        event.listen(app.state.engine, "before_cursor_execute", count)
        yield base, statements


def test_unknown_key_ids_cost_no_query_of_their_own(tenant: Tenant, counted) -> None:
    base, statements = counted
    started = time.monotonic()
    answers = [client(_unknown_key()).get(f"{base}/v1/leads/x") for _ in range(200)]
    elapsed = time.monotonic() - started
    assert {a.status_code for a in answers} == {401}
    # Only reloads of the whole key set, at most one a second; never one per request.
    assert all("intake_api_keys" in s for s in statements)
    assert 1 <= len(statements) <= elapsed + 2, (len(statements), elapsed)


def test_unknown_ids_and_wrong_secrets_get_the_same_answer(tenant: Tenant, counted) -> None:
    base, _ = counted
    assert tenant.key_id is not None
    wrong_secret = f"mk_{tenant.key_id.hex}_{'x' * 43}"
    unknown = client(_unknown_key()).get(f"{base}/v1/leads/x")
    wrong = client(wrong_secret).get(f"{base}/v1/leads/x")
    assert (unknown.status_code, unknown.content) == (wrong.status_code, wrong.content)
