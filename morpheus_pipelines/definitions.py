"""The single ``dg.Definitions`` of the code location, assembled explicitly."""

from __future__ import annotations

import dagster as dg

from morpheus_pipelines.resources.env import env_or_default
from morpheus_pipelines.resources.warehouse import WarehouseResource

warehouse = WarehouseResource(
    database_url=env_or_default("MORPHEUS_DATABASE_URL"),
    home=env_or_default("MORPHEUS_HOME"),
    source_database_url=env_or_default("MORPHEUS_SOURCE_DATABASE_URL"),
    source_schema=env_or_default("MORPHEUS_SOURCE_SCHEMA"),
)

defs = dg.Definitions(
    assets=[],
    resources={"warehouse": warehouse},
)
