"""Shared fixtures: one embedded PostgreSQL per test session, one fresh database per test.

Each test database is cloned from a template that was migrated once (``CREATE DATABASE …
TEMPLATE``), so a test starts from the real Alembic schema in a few tens of milliseconds and
cannot see another test's rows.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.session import dispose_engines
from morpheus_pipelines.db.urls import with_driver
from morpheus_pipelines.platform.observability.events import LOGGER_NAME
from tests.support.bytecode import share_bytecode, use_shared_bytecode
from tests.support.databases import (
    TEMPLATE,
    TEST_SERVER_OPTIONS,
    DatabaseFactory,
    admin_url,
    server_home,
)
from tests.support.events import EventLines
from tests.support.hubspot import RecordingSleep

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """Before the xdist workers start (they inherit the environment): one bytecode cache for
    the session's processes where the environment turns Python's off (tests/support/bytecode.py)."""
    prefix = ROOT / ".morpheus" / "pycache"
    if share_bytecode(os.environ, prefix):
        use_shared_bytecode(prefix)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the embedded PostgreSQL ``database``: ``uv run pytest -m "not
    database"`` is the fast tier (README, "Development")."""
    for item in items:
        if "pg_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.database)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[EmbeddedPostgres]:
    home = server_home()
    server = EmbeddedPostgres(home, extra_options=TEST_SERVER_OPTIONS)
    server.start()
    yield server
    dispose_engines()
    server.destroy()
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def template_database(pg_server: EmbeddedPostgres) -> str:
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(TEMPLATE)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
    upgrade(pg_server.status().url(TEMPLATE))
    return TEMPLATE


@pytest.fixture
def database_factory(
    pg_server: EmbeddedPostgres, template_database: str
) -> Iterator[DatabaseFactory]:
    """Databases private to this test (see :class:`DatabaseFactory`)."""
    factory = DatabaseFactory(pg_server, template_database)
    yield factory
    factory.drop_all()


@pytest.fixture
def database_url(database_factory) -> str:
    """A SQLAlchemy URL of a fresh, migrated database private to this test."""
    return database_factory()


@pytest.fixture
def instance_database(pg_server: EmbeddedPostgres) -> Iterator[str]:
    """An empty database for a Dagster instance's storage (it runs its own migrations), as a
    ``postgresql+psycopg2`` URL; dropped afterwards."""
    name = f"dagster_instance_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield with_driver(pg_server.status().url(name), "psycopg2")
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def project_root() -> Path:
    return ROOT


@pytest.fixture
def sleeps() -> RecordingSleep:
    """A stand-in for ``time.sleep`` that records each wait (clients take it as ``sleep``)."""
    return RecordingSleep()


@pytest.fixture
def event_lines() -> Iterator[EventLines]:
    """The structured event lines written during the test."""
    handler = EventLines()
    logger = logging.getLogger(LOGGER_NAME)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)  # in case no event was logged yet in this process
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)
