"""A key's request budget is one budget however many workers and hosts serve it
(docs/leads.md, "Request budgets"): every process counts against the same row in PostgreSQL,
so a keep-alive client whose requests all reach one worker gets the whole budget, and two
hosts together admit it once."""

from __future__ import annotations

import asyncio
import threading
import uuid
from contextlib import ExitStack

import requests

from morpheus_pipelines.crm.api.budget import KEY_POLICY, RequestBudget, SharedBudget
from morpheus_pipelines.crm.rules.request_budget import BudgetPolicy
from morpheus_pipelines.db.autocommit import AutocommitConnections
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.serve_process import morpheus_serve
from tests.support.intake import Tenant, client, intake_settings, serving

BUDGET = 6


def test_two_hosts_on_one_database_admit_one_budget(tenant: Tenant, database_url: str) -> None:
    settings = intake_settings(database_url, requests_per_minute=BUDGET)
    with ExitStack() as hosts:
        bases = [hosts.enter_context(serving(settings))[0] for _ in range(2)]
        sessions = [client(tenant.key) for _ in bases]
        codes = [
            sessions[i % 2].get(f"{bases[i % 2]}/v1/leads").status_code for i in range(2 * BUDGET)
        ]
    assert codes.count(200) == BUDGET
    assert codes[:BUDGET] == [200] * BUDGET and set(codes[BUDGET:]) == {429}


def test_a_budget_per_process_would_have_admitted_it_twice() -> None:
    """The same alternation against one in-memory bucket per host: each admits its own
    ``BUDGET``, and the key gets twice what it was given."""
    hosts = [RequestBudget(BUDGET, name=KEY_POLICY, clock=lambda: 0.0) for _ in range(2)]
    admitted = sum(hosts[i % 2].take("key") == 0 for i in range(2 * BUDGET))
    assert admitted == 2 * BUDGET


def test_concurrent_takes_from_many_connections_admit_exactly_the_budget(
    database_url: str,
) -> None:
    """One statement per take, so no two requests can both read the last unit free: ten
    takers at once on two sets of five connections (two hosts), ten takes each."""
    policy = BudgetPolicy(KEY_POLICY, 25)

    async def spend_all() -> list[bool]:
        hosts = [AutocommitConnections(libpq_url(database_url), size=5) for _ in range(2)]
        budgets = [SharedBudget(connections, policy) for connections in hosts]
        start = asyncio.Barrier(10)

        async def spend(budget: SharedBudget) -> list[bool]:
            await start.wait()
            return [(await budget.take("concurrent")).admitted for _ in range(10)]

        try:
            takers = [spend(budgets[i % 2]) for i in range(10)]
            return [admitted for taker in await asyncio.gather(*takers) for admitted in taker]
        finally:
            for connections in hosts:
                await connections.close()

    admitted = asyncio.run(spend_all())
    assert len(admitted) == 100 and admitted.count(True) == 25


def test_morpheus_serve_with_two_workers_gives_a_keep_alive_client_the_whole_budget(
    tenant: Tenant, database_url: str
) -> None:
    """One connection reaches one worker. Before the budget was shared each worker had half
    of it, and this client was refused after ``BUDGET / 2``."""
    environ = {"MORPHEUS_INTAKE_REQUESTS_PER_MINUTE": str(BUDGET)}
    with morpheus_serve(database_url, workers=2, environ=environ) as (base, _):
        keep_alive = client(tenant.key)
        codes = [keep_alive.get(f"{base}/v1/leads").status_code for _ in range(BUDGET + 1)]
        # A new connection per request, spread over both workers: still the one budget.
        fresh = [
            requests.get(
                f"{base}/v1/leads",
                headers={"Authorization": f"Bearer {tenant.key}", "Connection": "close"},
                timeout=10,
            ).status_code
            for _ in range(4)
        ]
    assert codes == [200] * BUDGET + [429]
    assert fresh == [429] * 4


def test_concurrent_requests_open_no_budget_connection_past_the_pools_size(
    tenant: Tenant, database_url: str
) -> None:
    """More requests at once than the budget has connections: they wait their turn for one,
    rather than each opening a connection (a server process) of its own."""
    settings = intake_settings(database_url, budget_pool_size=2)
    lead = uuid.uuid4()
    with serving(settings) as (base, app):
        start = threading.Barrier(12)
        codes: list[int] = []

        def send() -> None:
            session = client(tenant.key)
            start.wait()
            codes.extend(session.get(f"{base}/v1/leads/{lead}").status_code for _ in range(15))

        threads = [threading.Thread(target=send) for _ in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        opened = app.state.intake.budget_connections.opened
    assert codes == [403] * 180  # every one admitted, then not the caller's lead
    assert 0 < opened <= 2
