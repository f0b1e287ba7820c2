"""Which database failures are an outage (503, retried) and which are not, on errors the real
server raises (docs/security.md, "Database errors"): as SQLAlchemy wraps them (a request's
transaction) and as psycopg raises them (the budget's statement on the event loop)."""

from __future__ import annotations

import socket
from collections.abc import Callable

import psycopg
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from morpheus_pipelines.crm.api.dependencies import database_failure
from morpheus_pipelines.db.urls import libpq_url


def _wrapped_error_of(url: str, *statements: str) -> Exception:
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with pytest.raises(DBAPIError) as raised, engine.begin() as conn:
            for statement in statements:
                conn.execute(text(statement))
        return raised.value
    finally:
        engine.dispose()


def _driver_error_of(url: str, *statements: str) -> Exception:
    with (
        pytest.raises(psycopg.Error) as raised,
        psycopg.connect(libpq_url(url), connect_timeout=3) as conn,
    ):
        for statement in statements:
            conn.execute(statement)
    return raised.value


def _sqlstate(exc: Exception) -> str:
    return getattr(exc, "orig", exc).sqlstate


@pytest.fixture(params=[_wrapped_error_of, _driver_error_of], ids=["sqlalchemy", "psycopg"])
def error_of(request) -> Callable[..., Exception]:
    return request.param


def test_an_index_row_too_large_is_a_refused_value_not_an_outage(
    database_url: str, error_of
) -> None:
    exc = error_of(
        database_url,
        "CREATE TEMP TABLE keys (k text PRIMARY KEY)",
        # Uncompressible text past what a btree row can hold: SQLSTATE 54000, which psycopg
        # raises as an OperationalError like a lost connection.
        "INSERT INTO keys SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 300)",
    )
    assert _sqlstate(exc) == "54000"
    assert database_failure(exc) == "value_refused"


def test_a_value_jsonb_refuses_is_a_refused_value(database_url: str, error_of) -> None:
    exc = error_of(database_url, "SELECT 'NaN'::jsonb")
    assert _sqlstate(exc).startswith("22")
    assert database_failure(exc) == "value_refused"


def test_a_missing_table_is_a_fault_of_the_service(database_url: str, error_of) -> None:
    assert database_failure(error_of(database_url, "SELECT * FROM no_such_table")) == "error"


def test_a_terminated_session_is_an_outage(database_url: str, error_of) -> None:
    exc = error_of(database_url, "SELECT pg_terminate_backend(pg_backend_pid())")
    assert database_failure(exc) == "unavailable"


def test_no_server_at_all_is_an_outage(error_of) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once it is closed
    exc = error_of(f"postgresql+psycopg://postgres:x@127.0.0.1:{port}/none", "SELECT 1")
    assert database_failure(exc) == "unavailable"


def test_waiting_too_long_for_a_connection_is_an_outage() -> None:
    """The event loop's connections raise the built-in TimeoutError when every one stays
    busy (the transactions' pool raises SQLAlchemy's own)."""
    assert database_failure(TimeoutError()) == "unavailable"
    assert database_failure(ValueError()) == "error"
