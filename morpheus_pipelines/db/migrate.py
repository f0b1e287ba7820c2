"""The Alembic migrations shipped inside the package: applied by ``morpheus db migrate`` (and
``morpheus demo``/``dev`` on the embedded default) only; every other command checks the
database's revision against the package's with :func:`require_current_schema`, which needs
no DDL rights."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

# Alembic is imported by the functions that use it: the code location and the command line
# import this module to name its error, and a run needs Alembic only at its first step.
if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"


class SchemaOutOfDate(RuntimeError):
    """The database's schema is not the one this version of the package was written for."""


def alembic_config(url: str) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # ConfigParser interpolation would treat a '%' in a password as a directive.
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the warehouse at ``url`` to ``revision`` (default: the newest)."""
    from alembic import command

    command.upgrade(alembic_config(url), revision)


@cache
def _scripts() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(MIGRATIONS))


def head_revision() -> str:
    """The newest revision this version of the package ships."""
    head = _scripts().get_current_head()
    assert head is not None, "the package ships no migrations"
    return head


def current_revision(url: str) -> str | None:
    from alembic.runtime.migration import MigrationContext
    from sqlalchemy import create_engine

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def require_current_schema(url: str) -> None:
    """Return when the database at ``url`` is at this version's head revision; otherwise raise
    :class:`SchemaOutOfDate` saying what to do. Reads ``alembic_version``, nothing more."""
    current, head = current_revision(url), head_revision()
    if current == head:
        return
    known = {script.revision for script in _scripts().walk_revisions()}
    if current is None or current in known:
        raise SchemaOutOfDate(
            f"the database schema is at {current or 'none'}, this version needs {head}: "
            "run `morpheus db migrate`"
        )
    raise SchemaOutOfDate(
        f"the database schema is at {current}, newer than this version knows ({head}): "
        "upgrade morpheus-pipelines"
    )
