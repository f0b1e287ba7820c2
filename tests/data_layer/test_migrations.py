"""The Alembic migrations and the SQLAlchemy models describe the same schema."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from morpheus_pipelines.crm import automations as _automations  # noqa: F401  (its tables)
from morpheus_pipelines.db.migrate import MIGRATIONS, alembic_config, current_revision
from morpheus_pipelines.models import Base


def test_migrated_schema_matches_the_models(database_url: str) -> None:
    engine = create_engine(database_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, Base.metadata)
    engine.dispose()
    assert differences == []


def test_database_is_at_the_single_head(database_url: str) -> None:
    script = ScriptDirectory.from_config(alembic_config(database_url))
    assert len(script.get_heads()) == 1
    assert current_revision(database_url) == script.get_current_head()
    assert (MIGRATIONS / "env.py").exists()
