-- The Postgres image creates the warehouse database (POSTGRES_DB); the Dagster instance
-- lives in a database of its own on the same server, owned by the same role.
CREATE DATABASE dagster OWNER morpheus;
