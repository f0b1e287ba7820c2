"""The owner cache between an invalidation and a load that succeeds (docs/leads.md, "The owner
cache"): the view it held before answers nothing, neither while a load runs nor after one
failed, until a load succeeds."""

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
