"""PostgreSQL restarted in the middle of routing: the batch in flight rolls back, the tables
stay disjoint, nothing is lost, and a re-run converges to the state of a clean run."""

from __future__ import annotations

import shutil

import psycopg
from psycopg import sql

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.session import dispose_engines
from tests.reliability.test_kill_routing import COUNT, TABLES, VOLATILE, _prepare
from tests.support.databases import TEST_SERVER_OPTIONS, server_home
from tests.support.reliability import PARTITION


def test_postgres_restart_mid_routing(database_factory, hubspot_emulator, tmp_path) -> None:
    clean = _prepare(database_factory(), hubspot_emulator, tmp_path / "clean")
    assert clean.materialize(["routed_tenants"], PARTITION).success
    expected = {t: clean.table_hash(t, exclude=VOLATILE) for t in TABLES}

    home = server_home()
    server = EmbeddedPostgres(home, extra_options=TEST_SERVER_OPTIONS)
    try:
        status = server.start()
        url = status.url("restart_test")
        with psycopg.connect(
            status.url("postgres").replace("+psycopg", ""), autocommit=True
        ) as conn:
            conn.execute(sql.SQL("CREATE DATABASE restart_test"))
        upgrade(url)
        pipeline = _prepare(url, hubspot_emulator, tmp_path / "restart")
        child = pipeline.spawn(["routed_tenants"], PARTITION)
        while child.poll() is None:
            moved = pipeline.query("SELECT count(*) FROM apac_sales_owned_tenants")[0][0]
            if moved >= 50:
                break
        dispose_engines()
        server.stop()  # fast shutdown: every open transaction is rolled back
        child.communicate(timeout=120)
        assert child.returncode != 0, "the run finished before the restart"
        server.start()
        dispose_engines()
        assert pipeline.query(
            "SELECT count(*) FROM apac_active_tenants JOIN apac_sales_owned_tenants "
            "USING (tenant_id)"
        ) == [(0,)]
        assert pipeline.query(
            "SELECT (SELECT count(*) FROM apac_active_tenants) + "
            "(SELECT count(*) FROM apac_sales_owned_tenants)"
        ) == [(COUNT,)]
        assert pipeline.materialize(["routed_tenants"], PARTITION).success
        assert {t: pipeline.table_hash(t, exclude=VOLATILE) for t in TABLES} == expected
    finally:
        dispose_engines()
        server.destroy()
        shutil.rmtree(home, ignore_errors=True)
