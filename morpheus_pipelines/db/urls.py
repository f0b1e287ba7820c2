"""Where the warehouse, source and Dagster-instance databases live.

``MORPHEUS_DATABASE_URL`` wins; when it is unset the embedded server under ``MORPHEUS_HOME``
is started (or reused) and its ``morpheus`` database is the warehouse, except with
``MORPHEUS_ENV=production``, where an unset URL is an error and nothing is started. The Dagster
instance lives in the ``dagster`` database of the same server unless
``MORPHEUS_DAGSTER_DATABASE_URL`` names another one.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url

from morpheus_pipelines.db.embedded import DAGSTER_DATABASE, EmbeddedPostgres
from morpheus_pipelines.platform.settings import (
    DATABASE_URL_FORM,
    Settings,
    SettingsError,
    load_settings,
)

DAGSTER_URL_VARIABLE = "MORPHEUS_DAGSTER_DATABASE_URL"


def with_driver(url: str, driver: str) -> str:
    """The same URL with ``postgresql+<driver>`` as its scheme."""
    return (
        make_url(url).set(drivername=f"postgresql+{driver}").render_as_string(hide_password=False)
    )


def libpq_url(url: str) -> str:
    """A URL that psql and libpq accept (no SQLAlchemy driver suffix)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


# Embedded servers this process has started (or found running) and whose databases it has
# created: later calls only read the server's pid file, so a call per session stays cheap.
_ensured_homes: set[Path] = set()


def require_embedded_allowed(settings: Settings) -> None:
    """Refuse, naming ``MORPHEUS_DATABASE_URL``, to use an embedded server in production."""
    if settings.production and not settings.database_url:
        raise SettingsError(
            [
                (
                    "MORPHEUS_DATABASE_URL",
                    f"{DATABASE_URL_FORM} (MORPHEUS_ENV=production starts no embedded database)",
                    "nothing",
                )
            ]
        )


def warehouse_url(settings: Settings | None = None, *, start_embedded: bool = True) -> str:
    """The warehouse URL (``postgresql+psycopg``): the one place that decides it.

    ``MORPHEUS_DATABASE_URL`` when it is set; otherwise the embedded server under
    ``MORPHEUS_HOME``, started (and its databases created) if needed, or, with
    ``start_embedded=False``, only if already running (``EmbeddedPostgresError`` if not).
    With ``MORPHEUS_ENV=production`` and no URL, :class:`SettingsError`.
    The resource, the CLI, the demo and the Dagster storage all call this.
    """
    settings = settings or load_settings()
    if settings.database_url:
        return with_driver(settings.database_url, "psycopg")
    require_embedded_allowed(settings)
    server = EmbeddedPostgres(settings.home)
    status = server.status()
    if not start_embedded or (status.running and settings.home in _ensured_homes):
        return status.url()  # EmbeddedPostgresError when it is not running
    status = server.start()
    _ensured_homes.add(settings.home)
    return status.url()


def source_url(settings: Settings | None = None) -> str:
    """The DevOps tenant source database; defaults to the warehouse."""
    settings = settings or load_settings()
    if settings.source_database_url:
        return with_driver(settings.source_database_url, "psycopg")
    return warehouse_url(settings)


def dagster_url(settings: Settings | None = None, *, start_embedded: bool = True) -> str:
    """The Dagster instance database as a ``postgresql+psycopg2`` URL (dagster-postgres)."""
    settings = settings or load_settings()
    if settings.dagster_database_url:
        return with_driver(settings.dagster_database_url, "psycopg2")
    base = make_url(warehouse_url(settings, start_embedded=start_embedded))
    base = base.set(database=DAGSTER_DATABASE)
    return with_driver(base.render_as_string(hide_password=False), "psycopg2")
