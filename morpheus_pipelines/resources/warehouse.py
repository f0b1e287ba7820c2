"""The warehouse database as a Dagster resource."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from sqlalchemy.orm import Session

from morpheus_pipelines.db.migrate import require_current_schema
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import source_url, warehouse_url
from morpheus_pipelines.platform.outputs import ReportOutputs
from morpheus_pipelines.platform.settings import DEFAULTS, Settings, load_settings

_current_schemas: set[str] = set()


def _require_current_schema_once(url: str) -> None:
    # A step process checks once; a database found behind is asked again next time, since
    # `morpheus db migrate` may have run in between.
    if url not in _current_schemas:
        require_current_schema(url)
        _current_schemas.add(url)


class WarehouseResource(dg.ConfigurableResource):
    """Where the product keeps what it makes. Tables: the warehouse Postgres,
    ``MORPHEUS_DATABASE_URL``, else the embedded server under ``MORPHEUS_HOME`` (started when
    a session first needs it, and shared between processes). Files (reports, per-tenant
    event files): ``MORPHEUS_REPORTS_URL``, linked through ``MORPHEUS_REPORTS_PUBLIC_URL``.

    The URL is resolved by :func:`~morpheus_pipelines.db.urls.warehouse_url` each time a
    session opens, nowhere else. A step that uses the resource first checks that the
    warehouse is at this version's schema (once per process and URL), so a run against a
    database that ``morpheus db migrate`` has not brought up fails at its first step, in one
    line, rather than half-way through a write."""

    database_url: str = ""
    home: str = DEFAULTS["MORPHEUS_HOME"]
    source_database_url: str = ""
    source_schema: str = DEFAULTS["MORPHEUS_SOURCE_SCHEMA"]
    reports_url: str = ""
    reports_public_url: str = ""

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        _require_current_schema_once(warehouse_url(self.settings()))

    def settings(self) -> Settings:
        """This resource's configuration as :class:`~.settings.Settings`."""
        return load_settings(
            {
                "MORPHEUS_DATABASE_URL": self.database_url,
                "MORPHEUS_HOME": self.home,
                "MORPHEUS_SOURCE_DATABASE_URL": self.source_database_url,
                "MORPHEUS_SOURCE_SCHEMA": self.source_schema,
            }
        )

    def outputs(self) -> ReportOutputs:
        """Where report and event files are published (docs/reports.md, "Where reports go")."""
        return ReportOutputs(self.reports_url, home=self.home, public_url=self.reports_public_url)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A caller-owned transaction on the warehouse (commit on exit, rollback on error)."""
        with get_session(warehouse_url(self.settings())) as session:
            yield session

    @contextmanager
    def source_session(self) -> Iterator[Session]:
        """A read transaction on the DevOps tenant source database."""
        with get_session(source_url(self.settings())) as session:
            yield session

    def source_in_warehouse(self) -> bool:
        """Whether the DevOps tenant source is the warehouse database itself (the default),
        so its table can be read in place by the warehouse's own statements."""
        settings = self.settings()
        return source_url(settings) == warehouse_url(settings)
