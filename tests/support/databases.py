"""The embedded test server (its home and settings) and its test databases: fresh ones cloned
from a migrated template, and copies of a database a test prepared."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.session import dispose_engines

TEMPLATE = "morpheus_template"

# Test data is disposable: skip the disk flushes that make a real server durable.
TEST_SERVER_OPTIONS = {"fsync": "off", "full_page_writes": "off"}

_counter = itertools.count()


def server_home() -> Path:
    """A fresh directory for an embedded server, outside pytest's own temp root: pytest
    resets that root to mode 0700 (even from another pytest process), which would lock out
    the unprivileged user PostgreSQL runs as under root."""
    return Path(tempfile.mkdtemp(prefix="morpheus-test-pg-"))


def admin_url(server: EmbeddedPostgres, database: str = "postgres") -> str:
    """A psycopg (libpq) URL for administrative statements."""
    return server.status().url(database).replace("postgresql+psycopg", "postgresql")


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
