"""Shared fixtures: one embedded PostgreSQL per test session, one fresh database per test.

Each test database is cloned from a template that was migrated once (``CREATE DATABASE …
TEMPLATE``), so a test starts from the real Alembic schema in a few tens of milliseconds and
cannot see another test's rows.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.session import dispose_engines
from tests.support.databases import DatabaseFactory, admin_url
from tests.support.hubspot import RecordingSleep

TEMPLATE = "morpheus_template"

# Test data is disposable: skip the disk flushes that make a real server durable.
TEST_SERVER_OPTIONS = {"fsync": "off", "full_page_writes": "off"}


def server_home() -> Path:
    """A fresh directory for an embedded server, outside pytest's own temp root: pytest
    resets that root to mode 0700 (even from another pytest process), which would lock out
    the unprivileged user PostgreSQL runs as under root."""
    return Path(tempfile.mkdtemp(prefix="morpheus-test-pg-"))


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
def project_root() -> Path:
    return Path(__file__).resolve().parent.parent


@pytest.fixture
def sleeps() -> RecordingSleep:
    """A stand-in for ``time.sleep`` that records each wait (clients take it as ``sleep``)."""
    return RecordingSleep()
