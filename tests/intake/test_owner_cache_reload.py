"""The owner cache's loads (docs/leads.md, "The owner cache"): after an invalidation the view it
held answers nothing, neither while a load runs nor after one failed, until a load succeeds;
the routing listener's thread loads it ahead of its TTL and after a change, before a lead
has to."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial

import pytest
from sqlalchemy import delete, text
from sqlalchemy.exc import DBAPIError

from morpheus_pipelines.crm.api.directory import OwnerDirectory
from morpheus_pipelines.crm.models import RoutingPoolMember
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.hosts import wait_until
from tests.support.intake import Tenant
from tests.support.locks import wait_until_blocked


@pytest.fixture
def cached(tenant: Tenant) -> Iterator[tuple[OwnerDirectory, int, int, int]]:
    """A directory that has loaded a pool of two reps, then heard that the first one left
    it: the directory, the pool, the rep who left and the one who stayed."""
    first = tenant.add_rep("first@example.com", "owner-1")
    second = tenant.add_rep("second@example.com", "owner-2")
    pool = tenant.add_pool("APAC", {first: 1, second: 1}, default=True)
    # A TTL longer than the test: only the invalidation can make the view load again.
    directory = OwnerDirectory(partial(get_session, tenant.url), ttl_seconds=3600)
    with get_session(tenant.url) as session:
        held = directory.routing(session, tenant.subscription_id).pools[pool]
    assert {c.sales_rep_id for c in held} == {first, second}
    with get_session(tenant.url) as session:
        session.execute(delete(RoutingPoolMember).where(RoutingPoolMember.salesRepId == first))
    directory.invalidate()  # what the routing listener does on the change's notification
    yield directory, pool, first, second


def _members(directory: OwnerDirectory, tenant: Tenant, pool: int) -> set[int | None]:
    with get_session(tenant.url) as session:
        return {
            c.sales_rep_id for c in directory.routing(session, tenant.subscription_id).pools[pool]
        }


def test_a_failed_reload_leaves_the_view_due_until_a_load_succeeds(
    tenant: Tenant, cached: tuple[OwnerDirectory, int, int, int]
) -> None:
    directory, pool, _, second = cached
    refreshes = directory.refreshes
    with get_session(tenant.url) as session:
        pid = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with get_session(tenant.url) as other:  # waits until the backend has exited
            assert other.execute(text("SELECT pg_terminate_backend(:pid, 5000)"), {"pid": pid})
        with pytest.raises(DBAPIError):
            directory.routing(session, tenant.subscription_id)
        session.rollback()

    assert directory.refreshes == refreshes
    assert directory.held(tenant.subscription_id) is None, "the old view still answers"
    assert _members(directory, tenant, pool) == {second}
    assert directory.refreshes == refreshes + 1
    assert directory.held(tenant.subscription_id) is not None


def test_while_a_reload_runs_the_old_view_answers_nothing(
    tenant: Tenant, cached: tuple[OwnerDirectory, int, int, int]
) -> None:
    directory, pool, _, second = cached
    loaded: list[set[int | None]] = []
    with get_session(tenant.url) as locker:
        # The load reads the pools: it waits behind this lock until the block ends.
        locker.execute(text("LOCK TABLE routing_pools IN ACCESS EXCLUSIVE MODE"))
        loader = threading.Thread(target=lambda: loaded.append(_members(directory, tenant, pool)))
        loader.start()
        wait_until_blocked(tenant.url, loader)
        assert directory.held(tenant.subscription_id) is None, "the old view answers a load"
    loader.join(timeout=30)
    assert loaded == [{second}]
    assert directory.held(tenant.subscription_id) is not None


def test_the_view_is_loaded_ahead_of_its_ttl_off_the_leads_path(tenant: Tenant) -> None:
    rep = tenant.add_rep("first@example.com", "owner-1")
    pool = tenant.add_pool("APAC", {rep: 1}, default=True)
    now = [0.0]
    directory = OwnerDirectory(
        partial(get_session, tenant.url), ttl_seconds=5.0, clock=lambda: now[0]
    )
    assert directory.refresh_ahead(1.0), "never loaded: due"
    assert directory.refreshes == 1
    now[0] = 3.9
    assert not directory.refresh_ahead(1.0), "more than a second before the TTL"
    now[0] = 4.1
    assert directory.refresh_ahead(1.0)
    now[0] = 9.0  # past the first load's TTL, within the second's
    assert directory.held(tenant.subscription_id).pools[pool][0].sales_rep_id == rep
    directory.invalidate()
    assert directory.refresh_ahead(1.0)
    assert directory.refreshes == 3


def test_the_listener_loads_a_change_before_any_lead_asks(tenant: Tenant, service) -> None:
    _, app = service
    directory = app.state.directory
    rep = tenant.add_rep("first@example.com", "owner-1")
    pool = tenant.add_pool("APAC", {rep: 1}, default=True)  # notifies the listener

    def loaded() -> bool:
        routing = directory.held(tenant.subscription_id)
        return routing is not None and [c.sales_rep_id for c in routing.pools.get(pool, [])] == [
            rep
        ]

    wait_until(loaded, timeout=10, what="the listener's thread to load the new pool")
