"""``morpheus db``: the warehouse database, an embedded PostgreSQL server unless
``MORPHEUS_DATABASE_URL`` names one."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from morpheus_pipelines.cli.parsing import ActionGroup
from morpheus_pipelines.db.embedded import DAGSTER_DATABASE

# Every command imports these itself: the database layer brings SQLAlchemy, Alembic and
# pydantic-settings, which `morpheus --help` and the commands of other groups do not need.
if TYPE_CHECKING:
    from morpheus_pipelines.db.embedded import EmbeddedPostgres
    from morpheus_pipelines.platform.settings import Settings


def _embedded(settings: Settings) -> EmbeddedPostgres:
    from morpheus_pipelines.db.embedded import EmbeddedPostgres
    from morpheus_pipelines.db.urls import require_embedded_allowed

    require_embedded_allowed(settings)  # MORPHEUS_ENV=production: never an embedded server
    return EmbeddedPostgres(settings.home)


def _external(settings: Settings) -> bool:
    if settings.database_url:
        print("MORPHEUS_DATABASE_URL is set: using that database, nothing embedded is managed.")
        return True
    return False


def redacted(url: str) -> str:
    """``url`` with its password hidden, fit to print."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def checked_warehouse_url() -> str:
    """The warehouse's URL (starting the embedded server if that is the one) once its schema
    is this version's: what every command that reads or writes the warehouse needs first.
    Only `morpheus db migrate` changes the schema (``SchemaOutOfDate`` otherwise)."""
    from morpheus_pipelines.db.migrate import require_current_schema
    from morpheus_pipelines.db.urls import warehouse_url
    from morpheus_pipelines.platform.settings import load_settings

    url = warehouse_url(load_settings())
    require_current_schema(url)
    return url


@click.group(cls=ActionGroup)
def db() -> None:
    """Manage the warehouse database (embedded by default).

    Embedded PostgreSQL under MORPHEUS_HOME, unless MORPHEUS_DATABASE_URL names a database:
    then nothing embedded is started or stopped."""


@db.command()
def start() -> int:
    """Start the embedded server (or reuse it); print its URL.

    The URL, fit for psql, is the last line."""
    from morpheus_pipelines.db.urls import libpq_url
    from morpheus_pipelines.platform.settings import load_settings

    settings = load_settings()
    if not _external(settings):
        status = _embedded(settings).start()
        print(f"embedded PostgreSQL running on 127.0.0.1:{status.port} ({status.data_dir})")
        print(libpq_url(status.url()))
    return 0


@db.command()
def stop() -> int:
    """Stop the embedded server."""
    from morpheus_pipelines.platform.settings import load_settings

    settings = load_settings()
    if not _external(settings):
        stopped = _embedded(settings).stop()
        print("stopped" if stopped else "not running")
    return 0


@db.command()
def status() -> int:
    """Say whether the embedded server runs.

    Exit status 0 when it runs, 3 when it is stopped."""
    from morpheus_pipelines.platform.settings import load_settings

    settings = load_settings()
    if settings.database_url:
        print(f"external database: {redacted(settings.database_url)}")
        return 0
    embedded = _embedded(settings).status()
    if embedded.running:
        print(f"running: pid {embedded.pid}, 127.0.0.1:{embedded.port}, data {embedded.data_dir}")
        return 0
    print(f"not running (data directory {embedded.data_dir})")
    return 3


@db.command()
@click.option(
    "--driver",
    type=click.Choice(["libpq", "psycopg", "psycopg2"]),
    default="libpq",
    help="The URL's form: libpq is what psql takes, the others are SQLAlchemy URLs.",
)
@click.option(
    "--database",
    type=click.Choice(["morpheus", DAGSTER_DATABASE]),
    default="morpheus",
    help="The warehouse, or the Dagster instance's database.",
)
def url(driver: str, database: str) -> int:
    """Print the database's URL (the embedded server must be running)."""
    from morpheus_pipelines.db.embedded import EmbeddedPostgresError
    from morpheus_pipelines.db.urls import dagster_url, libpq_url, warehouse_url, with_driver
    from morpheus_pipelines.platform.settings import load_settings

    settings = load_settings()
    try:
        found = warehouse_url(settings, start_embedded=False)
    except EmbeddedPostgresError as exc:
        running = _embedded(settings).status().running
        print(
            exc if running else "embedded PostgreSQL is not running; run `morpheus db start`",
            file=sys.stderr,
        )
        return 1
    if database == DAGSTER_DATABASE:
        found = dagster_url(settings)
    print(libpq_url(found) if driver == "libpq" else with_driver(found, driver))
    return 0


@db.command()
def migrate() -> int:
    """Apply the warehouse's migrations.

    The only command that changes the schema (besides demo and dev on the embedded default);
    starts the embedded server first when it is the warehouse."""
    from morpheus_pipelines.db.migrate import upgrade
    from morpheus_pipelines.db.urls import warehouse_url
    from morpheus_pipelines.platform.settings import load_settings

    migrated = warehouse_url(load_settings())
    upgrade(migrated)
    print(f"warehouse migrated: {redacted(migrated)}")
    return 0
