"""Which database failures are an outage (503, retried) and which are not, on errors the real
server raises (docs/security.md, "Database errors")."""

from __future__ import annotations

import socket

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from morpheus_pipelines.crm.api.dependencies import database_failure


def _error_of(url: str, *statements: str) -> DBAPIError:
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with pytest.raises(DBAPIError) as raised, engine.begin() as conn:
            for statement in statements:
                conn.execute(text(statement))
        return raised.value
    finally:
        engine.dispose()


def test_an_index_row_too_large_is_a_refused_value_not_an_outage(database_url: str) -> None:
    exc = _error_of(
        database_url,
        "CREATE TEMP TABLE keys (k text PRIMARY KEY)",
        # Uncompressible text past what a btree row can hold: SQLSTATE 54000, which psycopg
        # raises as an OperationalError like a lost connection.
        "INSERT INTO keys SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 300)",
    )
    assert exc.orig.sqlstate == "54000"
    assert database_failure(exc) == "value_refused"


def test_a_value_jsonb_refuses_is_a_refused_value(database_url: str) -> None:
    exc = _error_of(database_url, "SELECT 'NaN'::jsonb")
    assert exc.orig.sqlstate.startswith("22")
    assert database_failure(exc) == "value_refused"


def test_a_missing_table_is_a_fault_of_the_service(database_url: str) -> None:
    assert database_failure(_error_of(database_url, "SELECT * FROM no_such_table")) == "error"


def test_a_terminated_session_is_an_outage(database_url: str) -> None:
    exc = _error_of(database_url, "SELECT pg_terminate_backend(pg_backend_pid())")
    assert database_failure(exc) == "unavailable"


def test_no_server_at_all_is_an_outage() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once it is closed
    exc = _error_of(f"postgresql+psycopg://postgres:x@127.0.0.1:{port}/none", "SELECT 1")
    assert database_failure(exc) == "unavailable"
