"""Errors an operator can act on, as lines that say what to fix instead of a traceback (``morpheus
--debug COMMAND`` shows the traceback): malformed variables, a schema behind the package, a
database that cannot be reached or refuses the login."""

from __future__ import annotations

import re

import psycopg
import sqlalchemy.exc

from morpheus_pipelines.db.embedded import EmbeddedPostgresError
from morpheus_pipelines.db.migrate import SchemaOutOfDate
from morpheus_pipelines.platform.settings import SettingsError, load_settings, mask_password


def _where() -> str:
    """Which database the command used, by the variable that names it (password masked)."""
    try:
        settings = load_settings()
    except SettingsError:
        return "the database"
    if settings.database_url:
        return f"the database at MORPHEUS_DATABASE_URL={mask_password(settings.database_url)}"
    return (
        f"the embedded database under MORPHEUS_HOME={settings.home} "
        "(MORPHEUS_DATABASE_URL is unset)"
    )


def _reason(error: BaseException) -> str:
    """The driver's own reason, on one line: ``Connection refused``, ``password authentication
    failed for user "x"``."""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    reason = first.rsplit(" failed: ", 1)[-1]
    return re.sub(r"\s+", " ", reason.removeprefix("FATAL:")).strip()


def operator_lines(error: BaseException) -> list[str] | None:
    """What to print for ``error``, one ``error: …`` line each, or ``None`` for a bug (which
    keeps its traceback)."""
    if isinstance(error, SettingsError):
        return error.lines
    if isinstance(error, SchemaOutOfDate):
        return [str(error)]
    if isinstance(error, sqlalchemy.exc.DBAPIError):
        error = error.orig or error
    if isinstance(error, psycopg.OperationalError):
        return [f"cannot use {_where()}: {_reason(error)}"]
    if isinstance(error, EmbeddedPostgresError):
        return [f"cannot use {_where()}: {_reason(error)}"]
    return None
