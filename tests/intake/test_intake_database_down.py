"""The database goes away: 503 with nothing half-written, and the service recovers by itself
when it returns (docs/leads.md)."""

from __future__ import annotations

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from tests.support.databases import admin_url
from tests.support.intake import Tenant, client, intake_settings, problem_of, serving


def _refuse_connections(pg_server, database: str, refuse: bool) -> None:
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(
                sql.Identifier(database), sql.SQL("false" if refuse else "true")
            )
        )
        if refuse:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (database,),
            )


def test_503_while_the_database_is_away_then_recovery(
    tenant: Tenant, database_url: str, pg_server
) -> None:
    tenant.add_rep("ana@acme.test", "101")
    database = make_url(database_url).database
    with serving(intake_settings(database_url)) as (base, _):
        session = client(tenant.key)
        assert session.post(f"{base}/v1/leads", json=tenant.lead_body("before")).status_code == 201

        _refuse_connections(pg_server, database, True)
        try:
            down = session.post(f"{base}/v1/leads", json=tenant.lead_body("during"))
            health = session.get(f"{base}/healthz")
        finally:
            _refuse_connections(pg_server, database, False)

        problem_of(down, 503, "database_unavailable")
        assert down.headers["Retry-After"] == "1"
        assert health.status_code == 503
        after = session.post(f"{base}/v1/leads", json=tenant.lead_body("during"))
        assert after.status_code == 201  # the same submission, now stored once
    assert tenant.leads() == 2
    assert sum(tenant.open_leads().values()) == 2
