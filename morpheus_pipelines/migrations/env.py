"""Alembic environment: runs migrations on the URL handed in by ``morpheus_pipelines.db.migrate``.

A session-level advisory lock serialises concurrent ``migrate`` calls (two processes starting
at once): the second waits, then finds nothing left to do.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, text

# The one place that imports both products' tables: importing each models package registers
# its tables on the shared metadata.
from morpheus_pipelines.crm import models as _crm_tables  # noqa: F401
from morpheus_pipelines.platform.store.model_base import Base
from morpheus_pipelines.tenants.store import models as _tenant_tables  # noqa: F401

MIGRATION_LOCK_KEY = 0x6D6F7270  # "morp"

config = context.config
target_metadata = Base.metadata


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
        connection.commit()
        try:
            context.configure(
                connection=connection, target_metadata=target_metadata, compare_type=True
            )
            with context.begin_transaction():
                context.run_migrations()
            connection.commit()
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK_KEY})
            connection.commit()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
