"""The Alembic migrations and the SQLAlchemy models describe the same schema."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from morpheus_pipelines.crm import models as _crm_tables  # noqa: F401  (registers them)
from morpheus_pipelines.db.migrate import MIGRATIONS, alembic_config, current_revision, upgrade
from morpheus_pipelines.platform.store.model_base import Base
from morpheus_pipelines.tenants.store import models as _tenant_tables  # noqa: F401


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


def test_rule_inputs_are_stored_uncompressed(database_url: str) -> None:
    """Tens of MiB of JSON a day, kept for two rows: pglz cost about two thirds of the write
    (docs/performance.md), so the column is stored out of line without compression."""
    engine = create_engine(database_url)
    with engine.begin() as connection:
        storage = connection.scalar(
            text(
                "SELECT attstorage FROM pg_attribute WHERE attrelid = "
                "'apac_routing_states'::regclass AND attname = 'rule_inputs'"
            )
        )
        connection.execute(
            text(
                "INSERT INTO apac_routing_states (partition_key, run_id, live, regime, digest, "
                "rule_inputs, recorded_at) VALUES ('2026-12-01', 'r', true, 'full', 'd', "
                "repeat('{\"k\": 1}', 100000), now())"
            )
        )
        stored = connection.scalar(
            text("SELECT pg_column_compression(rule_inputs) FROM apac_routing_states")
        )
    engine.dispose()
    assert storage == "e"
    assert stored is None  # not compressed (a compressed value names its method)


def test_activity_directions_are_one_lower_case_value_after_0018(database_url: str) -> None:
    """The AI dialer's calls were stored ``'OUTBOUND'``, everyone else's ``'outbound'``: the
    upgrade lower-cases the rows and the CHECK refuses the other spelling from then on."""
    import uuid

    import pytest
    from alembic import command
    from sqlalchemy.exc import IntegrityError

    command.downgrade(alembic_config(database_url), "0016")
    engine = create_engine(database_url)
    subscription = uuid.uuid4()
    insert = text(
        'INSERT INTO activities ("subscriptionId", "externalId", type, direction, metadata, '
        "\"occurredAt\") VALUES (:sub, :ext, 'CALL', :direction, '{}', now())"
    )
    with engine.begin() as connection:
        connection.execute(
            text("INSERT INTO subscriptions (id, name) VALUES (:sub, 'acme')"),
            {"sub": subscription},
        )
        rows = (("a", "OUTBOUND"), ("b", "outbound"), ("c", "Inbound"), ("d", None))
        for ext, direction in rows:
            connection.execute(insert, {"sub": subscription, "ext": ext, "direction": direction})
    upgrade(database_url)

    with engine.begin() as connection:
        stored = dict(
            connection.execute(text('SELECT "externalId", direction FROM activities')).all()
        )
    assert stored == {"a": "outbound", "b": "outbound", "c": "inbound", "d": None}
    with (
        pytest.raises(IntegrityError, match="ck_activities_known_direction"),
        engine.begin() as connection,
    ):
        connection.execute(insert, {"sub": subscription, "ext": "e", "direction": "OUTBOUND"})
    engine.dispose()


def test_the_engagement_index_names_the_products_ai_owner(database_url: str) -> None:
    """Revision 0018 owns the AI owner id of the engagement index (0007 is left as applied):
    the predicate of the live index is the one the queries repeat, so a change of the
    product's constant fails here until a migration carries it."""
    from morpheus_pipelines.crm.models import ENGAGEMENT_PREDICATE
    from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID

    engine = create_engine(database_url)
    with engine.connect() as connection:
        definition = connection.scalar(
            text(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_activities_lead_engagement'"
            )
        )
    engine.dispose()
    assert f"'{DIALER_FALLBACK_HUBSPOT_OWNER_ID}'" in definition
    assert f"'{DIALER_FALLBACK_HUBSPOT_OWNER_ID}'" in ENGAGEMENT_PREDICATE
