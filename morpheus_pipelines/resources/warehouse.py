"""The warehouse database as a Dagster resource."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import source_url, warehouse_url
from morpheus_pipelines.platform.outputs import ReportOutputs
from morpheus_pipelines.platform.settings import DEFAULTS, Settings, load_settings


class WarehouseResource(dg.ConfigurableResource):
    """Where the product keeps what it makes. Tables: the warehouse Postgres,
    ``MORPHEUS_DATABASE_URL``, else the embedded server under ``MORPHEUS_HOME`` (started when
    a session first needs it, and shared between processes). Files (reports, per-tenant
    event files): ``MORPHEUS_REPORTS_URL``, linked through ``MORPHEUS_REPORTS_PUBLIC_URL``.

    The URL is resolved by :func:`~morpheus_pipelines.db.urls.warehouse_url` each time a
    session opens, nowhere else."""

    database_url: str = ""
    home: str = DEFAULTS["MORPHEUS_HOME"]
    source_database_url: str = ""
    source_schema: str = DEFAULTS["MORPHEUS_SOURCE_SCHEMA"]
    reports_url: str = ""
    reports_public_url: str = ""

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
