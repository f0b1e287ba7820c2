"""The warehouse database as a Dagster resource."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property

import dagster as dg
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import with_driver
from morpheus_pipelines.settings import load_settings


class WarehouseResource(dg.ConfigurableResource):
    """The warehouse Postgres: ``MORPHEUS_DATABASE_URL``, else the embedded server under
    ``MORPHEUS_HOME`` (started on first use and shared between processes)."""

    database_url: str = ""
    home: str = "./.morpheus"
    source_database_url: str = ""
    source_schema: str = "devops"

    @cached_property
    def url(self) -> str:
        if self.database_url:
            return with_driver(self.database_url, "psycopg")
        from morpheus_pipelines.db.embedded import EmbeddedPostgres

        return EmbeddedPostgres(load_settings({"MORPHEUS_HOME": self.home}).home).start().url()

    @cached_property
    def source_url(self) -> str:
        if self.source_database_url:
            return with_driver(self.source_database_url, "psycopg")
        return self.url

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A caller-owned transaction on the warehouse (commit on exit, rollback on error)."""
        with get_session(self.url) as session:
            yield session

    @contextmanager
    def source_session(self) -> Iterator[Session]:
        """A read transaction on the DevOps tenant source database."""
        with get_session(self.source_url) as session:
            yield session
