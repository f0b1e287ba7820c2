"""The CRM tables by name: what the Dagster definitions describe (``dagster/column_schema``)
without importing a model themselves."""

from sqlalchemy import Table

from morpheus_pipelines.crm import models
from morpheus_pipelines.platform.store.model_base import mapped_tables

CRM_TABLES: dict[str, Table] = mapped_tables(models.__name__)
