"""The database goes away or stops answering: 503 with nothing half-written, and the service
recovers by itself when it returns (docs/leads.md)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from morpheus_pipelines.crm.api.dependencies import LEAD_STATEMENT_APPLICATION
from morpheus_pipelines.db.urls import libpq_url
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


def _budget_statement_waiting_on_a_lock(database_url: str) -> bool:
    with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
        return bool(
            conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s "
                "AND wait_event_type = 'Lock'",
                ("morpheus-intake-budget",),
            ).fetchone()[0]
        )


def test_a_budget_stuck_in_the_database_is_a_503_in_bounded_time(
    tenant: Tenant, database_url: str
) -> None:
    """The key's budget row locked by someone else, and the budget's one connection taken
    by a request waiting for it: that request's statement and the next request's wait for a
    connection both end in a 503 the sender retries, not a hang or a 500."""
    settings = intake_settings(database_url, budget_pool_size=1)
    lead = uuid.uuid4()
    with serving(settings) as (base, _):
        session = client(tenant.key)
        assert session.get(f"{base}/v1/leads/{lead}").status_code == 403  # the row exists
        with psycopg.connect(libpq_url(database_url)) as holder:
            holder.execute(
                "SELECT 1 FROM intake_request_budgets WHERE bucket = %s FOR UPDATE",
                (f"key:{tenant.key_id.hex}",),
            )
            with ThreadPoolExecutor(1) as pool:
                first = pool.submit(client(tenant.key).get, f"{base}/v1/leads/{lead}")
                while not _budget_statement_waiting_on_a_lock(database_url):
                    assert not first.done(), first.result().status_code
                second = session.get(f"{base}/v1/leads/{lead}")
                first = first.result()
            holder.rollback()
        after = session.get(f"{base}/v1/leads/{lead}")
    problem_of(first, 503, "database_unavailable")
    problem_of(second, 503, "database_unavailable")
    assert after.status_code == 403  # admitted again, then not the caller's lead


def test_an_operator_tells_the_intake_s_connections_apart(
    tenant: Tenant, database_url: str
) -> None:
    """``pg_stat_activity`` names the requests' transactions, the usual lead's statement and
    the budget's connections (docs/deployment.md, "Connection budget")."""
    tenant.add_rep("ana@acme.test", "101")
    with serving(intake_settings(database_url)) as (base, _):
        session = client(tenant.key)
        # The first loads the owner cache in a transaction; the second is the usual lead.
        for name in ("named", "usual"):
            assert session.post(f"{base}/v1/leads", json=tenant.lead_body(name)).status_code == 201
        with psycopg.connect(libpq_url(database_url), autocommit=True) as admin:
            names = {
                name
                for (name,) in admin.execute(
                    "SELECT application_name FROM pg_stat_activity WHERE datname = "
                    "current_database()"
                )
            }
    assert {"morpheus-intake", "morpheus-intake-budget", LEAD_STATEMENT_APPLICATION} <= names


def test_a_usual_lead_stuck_in_the_database_is_a_503_then_stored_once(
    tenant: Tenant, database_url: str
) -> None:
    """The usual lead's statement, on the event loop, waits on a lock past its timeout: a 503
    the sender retries, the statement cancelled on the server (nothing stored, the owner not
    charged), and the retry of the same submission stored once."""
    rep = tenant.add_rep("ana@acme.test", "101")
    settings = intake_settings(database_url, lead_statement_timeout=0.5)
    with serving(settings) as (base, app):
        session = client(tenant.key)
        # The first lead loads the owner cache; the next one takes the event loop's way.
        assert session.post(f"{base}/v1/leads", json=tenant.lead_body("warm")).status_code == 201
        with psycopg.connect(libpq_url(database_url)) as holder:
            holder.execute("LOCK TABLE leads IN SHARE MODE")  # no insert until it ends
            stuck = session.post(f"{base}/v1/leads", json=tenant.lead_body("stuck"), timeout=20)
            holder.rollback()
        after = session.post(f"{base}/v1/leads", json=tenant.lead_body("stuck"), timeout=20)
        opened = app.state.intake.lead_connections.opened
    problem_of(stuck, 503, "database_unavailable")
    assert after.status_code == 201  # not a replay: the stuck statement stored nothing
    assert tenant.leads() == 2
    assert tenant.open_leads()[rep] == 2
    assert opened >= 1  # the stuck lead went the event loop's way


def test_a_usual_lead_whose_connection_the_server_ended_is_stored_on_a_new_one(
    tenant: Tenant, database_url: str
) -> None:
    """The server ends the event loop's lead connections (a restart does): the next lead
    finds its kept connection broken and is stored once on a new one, not answered 503."""
    tenant.add_rep("ana@acme.test", "101")
    with serving(intake_settings(database_url)) as (base, app):
        session = client(tenant.key)
        for name in ("warm", "kept"):
            assert session.post(f"{base}/v1/leads", json=tenant.lead_body(name)).status_code == 201
        before = app.state.intake.lead_connections.opened
        with psycopg.connect(libpq_url(database_url), autocommit=True) as admin:
            ended = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (LEAD_STATEMENT_APPLICATION,),
            ).fetchone()[0]
        after = session.post(f"{base}/v1/leads", json=tenant.lead_body("after"))
        opened = app.state.intake.lead_connections.opened
    assert ended >= 1
    assert after.status_code == 201
    assert opened == before + 1
    assert tenant.leads() == 3
