"""The DevOps tenant table the pipeline selects from: an external asset, read-only."""

import os

import dagster as dg

from morpheus_pipelines.platform.settings import DEFAULTS

# Read when the code location loads, like the resources (resources/env.py).
SOURCE_SCHEMA = os.environ.get("MORPHEUS_SOURCE_SCHEMA") or DEFAULTS["MORPHEUS_SOURCE_SCHEMA"]

SOURCE_TENANTS = dg.AssetSpec(
    "source_tenants",
    group_name="tenants",
    owners=["team:devops"],
    description="Every tenant of the product, in DevOps' `{MORPHEUS_SOURCE_SCHEMA}.tenants` "
    "(`MORPHEUS_SOURCE_DATABASE_URL`): owned by DevOps, read-only for the pipeline, which "
    "selects the partition's APAC tenants from it.",
    metadata={"dagster/table_name": f"{SOURCE_SCHEMA}.tenants"},
    tags={"domain": "tenants"},
)
