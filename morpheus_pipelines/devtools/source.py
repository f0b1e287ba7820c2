"""The DevOps tenant source table ``{MORPHEUS_SOURCE_SCHEMA}.tenants`` (README, "Configuration").

The pipeline only reads it. Its DDL lives here for the demo, the tests and the benchmarks,
which create and fill a stand-in of the DevOps database; it is not part of the warehouse's
Alembic migrations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from psycopg import sql

SOURCE_COLUMNS = (
    "id",
    "custom_id",
    "name",
    "email",
    "sales_owner_email",
    "status",
    "region",
    "plan",
    "seats",
    "active_users_30d",
    "created_at",
    "last_active_at",
)

_DDL = """
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.tenants (
    id text PRIMARY KEY,
    custom_id text NULL,
    name text,
    email text NULL,
    sales_owner_email text NULL,
    status text,
    region text,
    plan text NULL,
    seats int NULL,
    active_users_30d int NULL,
    created_at timestamptz,
    last_active_at timestamptz NULL
);
CREATE INDEX IF NOT EXISTS tenants_region_created_at ON {schema}.tenants (region, created_at);
"""


def source_table_ddl(schema: str) -> sql.Composed:
    """``CREATE SCHEMA/TABLE IF NOT EXISTS`` for the source table in ``schema``."""
    return sql.SQL(_DDL).format(schema=sql.Identifier(schema))


def replace_source_tenants(url: str, schema: str, rows: Iterable[Sequence[object]]) -> int:
    """Create the stand-in source table if needed and replace its content with ``rows``
    (tuples in ``SOURCE_COLUMNS`` order). For the demo, tests and benchmarks only."""
    import psycopg

    from morpheus_pipelines.db.urls import libpq_url

    with psycopg.connect(libpq_url(url)) as conn:
        conn.execute(source_table_ddl(schema))
        conn.execute(sql.SQL("TRUNCATE {}.tenants").format(sql.Identifier(schema)))
        copied = 0
        with conn.cursor().copy(
            sql.SQL("COPY {}.tenants ({}) FROM STDIN").format(
                sql.Identifier(schema), sql.SQL(", ").join(map(sql.Identifier, SOURCE_COLUMNS))
            )
        ) as copy:
            for row in rows:
                copy.write_row(row)
                copied += 1
        conn.execute(sql.SQL("ANALYZE {}.tenants").format(sql.Identifier(schema)))
    return copied
