"""A pool, its member and its rule set up only with ``morpheus pool`` route a lead posted to
``POST /v1/leads``: the lead gets that pool and that rep as owner."""

from __future__ import annotations

import pytest

from morpheus_pipelines.cli import main
from morpheus_pipelines.crm.models import Lead, RoutingPool
from morpheus_pipelines.db.session import get_session
from tests.support.intake import Tenant, client, intake_settings, serving


def test_a_pool_set_up_by_commands_takes_the_lead(
    tenant: Tenant,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)
    tenant.add_rep("other@acme.test", "o-other")  # would own it through the implicit pool
    ana = tenant.add_rep("ana@acme.test", "o-ana")
    s = str(tenant.subscription_id)
    for line in (
        ["pool", "add", "--subscription", s, "--name", "inbound", "--default"],
        ["pool", "add", "--subscription", s, "--name", "events"],
        ["pool", "member", "add", "--subscription", s, "--pool", "events", "--rep", str(ana)],
        ["pool", "rule", "add", "--subscription", s, "--pool", "events", "--source", "fair"],
    ):
        assert main(line) == 0, capsys.readouterr().err
    # The service starts after the commands, so what it routes by is what they wrote (a
    # running service hears later changes through the routing tables' triggers).
    with serving(intake_settings(database_url)) as (base, _app):
        answer = client(tenant.key).post(
            f"{base}/v1/leads", json=tenant.lead_body("s-1", source="fair")
        )
    assert answer.status_code == 201, answer.text
    with get_session(database_url) as session:
        lead = session.get(Lead, answer.json()["lead_id"])
        pool = session.get(RoutingPool, lead.poolId)
        assert (pool.name, lead.ownerSalesRepId, lead.ownerHubspotOwnerId) == (
            "events",
            ana,
            "o-ana",
        )
        assert lead.ownerIsFallback is False
