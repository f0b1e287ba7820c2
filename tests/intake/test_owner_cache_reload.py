"""The owner cache after a load that failed (docs/leads.md, "The owner cache"): the view it
held before answers nothing more, neither the request that tried to load nor the event
loop's ``held``, until a load succeeds."""

from __future__ import annotations

from functools import partial

import pytest
from sqlalchemy import delete, text
from sqlalchemy.exc import DBAPIError

from morpheus_pipelines.crm.api.directory import OwnerDirectory
from morpheus_pipelines.crm.models import RoutingPoolMember
from morpheus_pipelines.db.session import get_session
from tests.support.intake import Tenant


def test_a_failed_reload_leaves_the_view_stale_until_a_load_succeeds(tenant: Tenant) -> None:
    first = tenant.add_rep("first@example.com", "owner-1")
    second = tenant.add_rep("second@example.com", "owner-2")
    pool = tenant.add_pool("APAC", {first: 1, second: 1}, default=True)
    # A TTL longer than the test: only "stale" can make the view load again.
    directory = OwnerDirectory(partial(get_session, tenant.url), ttl_seconds=3600)
    with get_session(tenant.url) as session:
        held = directory.routing(session, tenant.subscription_id).pools[pool]
    assert {c.sales_rep_id for c in held} == {first, second}

    with get_session(tenant.url) as session:
        session.execute(delete(RoutingPoolMember).where(RoutingPoolMember.salesRepId == first))
    directory.invalidate()  # what the routing listener does on the change's notification

    # The reload's connection is ended by the server before the load reads anything.
    with pytest.raises(DBAPIError), get_session(tenant.url) as session:
        pid = session.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with get_session(tenant.url) as other:
            other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        directory.routing(session, tenant.subscription_id)

    assert directory.held(tenant.subscription_id) is None, "the old view still answers"
    with get_session(tenant.url) as session:
        reloaded = directory.routing(session, tenant.subscription_id).pools[pool]
    assert {c.sales_rep_id for c in reloaded} == {second}
    assert directory.held(tenant.subscription_id) is not None
