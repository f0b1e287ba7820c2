"""Dagster instance storage on the project's Postgres (``dagster.yaml`` → ``storage: custom``).

This is dagster-postgres' ``DagsterPostgresStorage`` with one difference: the URL comes from
the environment the same way the warehouse's does. ``MORPHEUS_DAGSTER_DATABASE_URL`` wins;
otherwise the ``dagster`` database on the warehouse server (``MORPHEUS_DATABASE_URL``, or the
embedded server under ``MORPHEUS_HOME``, started if needed). So ``dagster dev``, ``dagster
definitions validate`` and run workers all work without extra setup, and the URL always has
the ``postgresql+psycopg2`` scheme dagster-postgres needs under SQLAlchemy 2.1.
"""

from __future__ import annotations

from typing import Any

from dagster._serdes import ConfigurableClassData
from dagster_postgres import DagsterPostgresStorage

from morpheus_pipelines.db.urls import dagster_url


class MorpheusPostgresStorage(DagsterPostgresStorage):
    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: dict[str, Any]
    ) -> MorpheusPostgresStorage:
        return cls(postgres_url=dagster_url(), inst_data=inst_data)
