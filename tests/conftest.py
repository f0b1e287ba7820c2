"""Shared fixtures: one embedded PostgreSQL per test session, one fresh database per test.

Each test database is cloned from a template that was migrated once (``CREATE DATABASE …
TEMPLATE``), so a test starts from the real Alembic schema in a few tens of milliseconds and
cannot see another test's rows.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.migrate import upgrade
from morpheus_pipelines.db.session import dispose_engines

TEMPLATE = "morpheus_template"
_counter = itertools.count()

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


def admin_url(server: EmbeddedPostgres, database: str = "postgres") -> str:
    """A psycopg (libpq) URL for administrative statements."""
    return server.status().url(database).replace("postgresql+psycopg", "postgresql")


@pytest.fixture(scope="session")
def template_database(pg_server: EmbeddedPostgres) -> str:
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(TEMPLATE)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE)))
    upgrade(pg_server.status().url(TEMPLATE))
    return TEMPLATE


class DatabaseFactory:
    """``factory()`` → the URL of another fresh, migrated database; ``factory(copy_of=url)``
    → a copy (data too) of a database this factory made. ``drop_all()`` removes them."""

    def __init__(self, server: EmbeddedPostgres, template: str) -> None:
        self._server = server
        self._template = template
        self._created: list[str] = []

    def __call__(self, copy_of: str | None = None) -> str:
        name = f"test_{next(_counter)}"
        template = self._template
        if copy_of is not None:
            template = make_url(copy_of).database
            assert template in self._created, "copy only a database this factory made"
            dispose_engines()  # a template database must have no open connections
        with psycopg.connect(admin_url(self._server), autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(template)
                )
            )
        self._created.append(name)
        return self._server.status().url(name)

    def drop_all(self) -> None:
        dispose_engines()
        with psycopg.connect(admin_url(self._server), autocommit=True) as conn:
            for name in self._created:
                conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        self._created.clear()


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
