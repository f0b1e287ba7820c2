"""Dagster instance storage on the project's Postgres (``dagster.yaml`` → ``storage: custom``).

This is dagster-postgres' ``DagsterPostgresStorage`` with one difference: the URL comes from
the environment the same way the warehouse's does. ``MORPHEUS_DAGSTER_DATABASE_URL`` wins;
otherwise the ``dagster`` database on the warehouse server (``MORPHEUS_DATABASE_URL``, or the
embedded server under ``MORPHEUS_HOME``), always with the ``postgresql+psycopg2`` scheme
dagster-postgres needs under SQLAlchemy 2.1.

A persistent instance (``DAGSTER_HOME`` set: ``morpheus dev``, the webserver, the daemon and
their run workers) starts the embedded server when it is the one, outside production.
Dagster's temporary instance (``DAGSTER_HOME`` unset: ``dagster definitions validate``, ``dg
check defs``, ``dg list defs``, a bare ``dagster dev``) starts nothing: it uses the embedded
server if it already runs, and otherwise a temporary SQLite storage, as Dagster's own default
would be, removed when the process that made it exits. That process names it in the
environment, so the processes ``dagster dev`` starts share it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any

from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from dagster._serdes import ConfigurableClassData
from dagster_postgres import DagsterPostgresStorage

from morpheus_pipelines.db.embedded import EmbeddedPostgresError
from morpheus_pipelines.db.urls import dagster_url
from morpheus_pipelines.platform.settings import load_settings

# The temporary SQLite storage's directory, for the processes started after it was made.
TEMPORARY_STORAGE_VARIABLE = "MORPHEUS_TEMPORARY_DAGSTER_STORAGE"


def _temporary_sqlite(inst_data: ConfigurableClassData | None) -> DagsterSqliteStorage:
    directory = os.environ.get(TEMPORARY_STORAGE_VARIABLE)
    if not directory:
        directory = tempfile.mkdtemp(prefix=".tmp_dagster_home_")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        os.environ[TEMPORARY_STORAGE_VARIABLE] = directory
    return DagsterSqliteStorage.from_local(directory, inst_data=inst_data)


class MorpheusPostgresStorage(DagsterPostgresStorage):
    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, Any]
    ) -> DagsterStorage:
        settings = load_settings()
        if os.environ.get(TEMPORARY_STORAGE_VARIABLE):
            return _temporary_sqlite(inst_data)
        if not os.environ.get("DAGSTER_HOME") and not settings.dagster_database_url:
            try:
                url = dagster_url(settings, start_embedded=False)
            except EmbeddedPostgresError:  # not running: nothing is started for this command
                return _temporary_sqlite(inst_data)
            return cls(postgres_url=url, inst_data=inst_data)
        return cls(postgres_url=dagster_url(settings), inst_data=inst_data)
