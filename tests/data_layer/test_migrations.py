"""The Alembic migrations and the SQLAlchemy models describe the same schema."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from morpheus_pipelines.crm import models as _crm_tables  # noqa: F401  (registers them)
from morpheus_pipelines.db.migrate import MIGRATIONS, alembic_config, current_revision, upgrade
from morpheus_pipelines.platform.store.model_base import VIEWS, Base
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


def test_the_views_models_have_the_views_columns(database_url: str) -> None:
    """``compare_metadata`` does not see views: a view's model (``day_view``) must name
    exactly the columns the migrations gave the view, or reading it through the model fails
    at run time."""
    engine = create_engine(database_url)
    with engine.connect() as connection:
        for name, table in VIEWS.tables.items():
            columns = connection.execute(
                text(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_name = :view ORDER BY ordinal_position"
                ),
                {"view": name},
            ).scalars()
            assert sorted(columns) == sorted(c.name for c in table.columns), name
    engine.dispose()
    assert len(VIEWS.tables) >= 3


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


def test_per_day_rows_become_versions_and_each_day_answers_as_before(database_url: str) -> None:
    """0026/0027/0028 move the candidates, answers and decisions of every stored day into
    versions: each day answers exactly the rows it had, its snapshot evidence included, and
    equal rows of consecutive days are one version."""
    from alembic import command

    command.downgrade(alembic_config(database_url), "0025")
    engine = create_engine(database_url)
    days = ("2026-11-27", "2026-11-28", "2026-11-29")
    # t-1 unchanged all three days; t-2 renamed on the second; t-3 absent on the second.
    names = {
        "t-1": ("One", "One", "One"),
        "t-2": ("Two", "Deux", "Deux"),
        "t-3": ("Three", None, "Three"),
    }
    with engine.begin() as connection:
        for index, day in enumerate(days):
            connection.execute(
                text("INSERT INTO apac_candidate_selections VALUES (:p, :run, now(), NULL, 3)"),
                {"p": day, "run": f"run-{index}"},
            )
            for tenant_id, by_day in names.items():
                if by_day[index] is None:
                    continue
                values = {"p": day, "t": tenant_id, "n": by_day[index], "run": f"run-{index}"}
                connection.execute(
                    text(
                        "INSERT INTO apac_tenant_candidates (partition_key, tenant_id, "
                        "source_type, name, forced_sales_owned, run_id) "
                        "VALUES (:p, :t, 'active', :n, false, :run)"
                    ),
                    values,
                )
                connection.execute(
                    text(
                        "INSERT INTO apac_enriched_tenants (partition_key, tenant_id, "
                        "company_name, enrichment_status, enrichment_error_count, run_id) "
                        "VALUES (:p, :t, :n, 'enriched', 0, :run)"
                    ),
                    values,
                )
                connection.execute(
                    text(
                        "INSERT INTO apac_routing_decisions (partition_key, tenant_id, run_id, "
                        "tenant_bucket, routing_rule, ambiguous_match, sales_owned_match, "
                        "priority_reason, snapshot_status, hubspot_sync_id, moved, decided_at) "
                        "VALUES (:p, :t, :run, 'active', 'default_active', false, false, :n, "
                        "'fresh', :run, false, now())"
                    ),
                    values,
                )
    before = _per_day(engine)
    upgrade(database_url)
    after = _per_day(engine)
    with engine.connect() as connection:
        versions = [
            connection.scalar(text(f"SELECT count(*) FROM {table}"))
            for table in (
                "apac_tenant_candidate_versions",
                "apac_enriched_tenant_versions",
                "apac_routing_decision_versions",
            )
        ]
    engine.dispose()
    assert after == before
    # t-1: one version; t-2: two; t-3: two (it left for a day) — 5, not the 8 rows.
    assert versions == [5, 5, 5]


def _per_day(engine) -> dict[str, list[tuple]]:
    with engine.connect() as connection:
        return {
            table: [
                tuple(row)
                for row in connection.execute(
                    text(f"SELECT partition_key, tenant_id, {column} FROM {table} ORDER BY 1, 2")
                )
            ]
            for table, column in (
                ("apac_tenant_candidates", "name"),
                ("apac_enriched_tenants", "company_name"),
                ("apac_routing_decisions", "priority_reason, hubspot_sync_id, snapshot_status"),
            )
        }


def test_routing_inputs_take_the_numbers_of_the_versions_they_were_decided_from(
    database_url: str,
) -> None:
    """0030: an input whose fingerprint still matches the candidate and answer valid on its
    day takes their version numbers (its tenant is carried as before); one whose versions
    changed since gets none (decided again); going back restores the fingerprint."""
    from alembic import command

    config = alembic_config(database_url)
    command.downgrade(config, "0029")
    fingerprint = (
        "md5(ROW(c.source_type, c.custom_id, c.name, c.email, c.sales_owner_email, c.status, "
        "c.plan, c.seats, c.active_users_30d, c.signup_at AT TIME ZONE 'UTC', "
        "c.last_active_at AT TIME ZONE 'UTC', c.rejection_reason, c.forced_sales_owned, "
        "e.email_domain, e.email_domain_class, e.official_website, e.company_name, e.industry, "
        "e.employee_count, e.country, e.enrichment_status, e.enrichment_error_count)::text)"
    )
    engine = create_engine(database_url)
    with engine.begin() as connection:
        for tenant_id, name in (("t-kept", "Kept"), ("t-changed", "Changed")):
            values = {"t": tenant_id, "n": name}
            connection.execute(
                text(
                    "INSERT INTO apac_tenant_candidate_versions (tenant_id, valid_from, "
                    "source_type, name, forced_sales_owned, run_id) "
                    "VALUES (:t, '2026-11-28', 'active', :n, false, 'run')"
                ),
                values,
            )
            connection.execute(
                text(
                    "INSERT INTO apac_enriched_tenant_versions (tenant_id, valid_from, "
                    "company_name, enrichment_status, enrichment_error_count, run_id) "
                    "VALUES (:t, '2026-11-28', :n, 'enriched', 0, 'run')"
                ),
                values,
            )
            connection.execute(
                text(
                    "INSERT INTO apac_routing_inputs (tenant_id, partition_key, run_id, "
                    f"input_fingerprint) SELECT c.tenant_id, '2026-11-28', 'run', {fingerprint} "
                    "FROM apac_tenant_candidate_versions c JOIN apac_enriched_tenant_versions e "
                    "ON e.tenant_id = c.tenant_id WHERE c.tenant_id = :t"
                ),
                values,
            )
        # Enrichment ran again for the day after it was routed: a new answer.
        connection.execute(
            text(
                "UPDATE apac_enriched_tenant_versions SET company_name = 'Other' "
                "WHERE tenant_id = 't-changed'"
            )
        )
        recorded = dict(
            connection.execute(
                text("SELECT tenant_id, input_fingerprint FROM apac_routing_inputs")
            ).all()
        )

    upgrade(database_url)
    with engine.connect() as connection:
        inputs = {
            row[0]: row[1:]
            for row in connection.execute(
                text(
                    "SELECT r.tenant_id, r.candidate_version = c.version_number, "
                    "r.answer_version = e.version_number, r.candidate_version IS NULL "
                    "FROM apac_routing_inputs r "
                    "JOIN apac_tenant_candidate_versions c ON c.tenant_id = r.tenant_id "
                    "JOIN apac_enriched_tenant_versions e ON e.tenant_id = r.tenant_id"
                )
            )
        }
    assert inputs == {"t-kept": (True, True, False), "t-changed": (None, None, True)}

    command.downgrade(config, "0029")
    with engine.connect() as connection:
        restored = dict(
            connection.execute(
                text("SELECT tenant_id, input_fingerprint FROM apac_routing_inputs")
            ).all()
        )
    engine.dispose()
    assert restored == {"t-kept": recorded["t-kept"], "t-changed": ""}


def test_stored_scores_become_versions_and_each_day_answers_as_before(database_url: str) -> None:
    """0032 moves every stored day's scores into versions that answer as stored: each day
    answers exactly the rows it had (a tenant absent on a day included), and going back down
    gives the table its rows again."""
    from alembic import command

    config = alembic_config(database_url)
    command.downgrade(config, "0031")
    engine = create_engine(database_url)
    days = ("2026-11-27", "2026-11-28", "2026-11-29")
    # t-1 every day with a moving score; t-2 absent on the second day.
    scores = {"t-1": (41.5, 40.25, 39.0), "t-2": (70.0, None, 71.0)}
    with engine.begin() as connection:
        for index, day in enumerate(days):
            for tenant_id, by_day in scores.items():
                if by_day[index] is None:
                    continue
                connection.execute(
                    text(
                        "INSERT INTO apac_tenant_score_snapshots (partition_key, tenant_id, "
                        "tenant_bucket, run_id, score_model_version, total_score, "
                        "calculated_priority, priority, priority_reason, contributions, "
                        "scored_at, input_fingerprint) VALUES (:p, :t, 'active', :run, 'v1', "
                        ":total, 'P2', 'P2', 'score', CAST(:c AS jsonb), now(), 'fp')"
                    ),
                    {
                        "p": day,
                        "t": tenant_id,
                        "run": f"run-{index}",
                        "total": by_day[index],
                        "c": f'{{"recency": {by_day[index]}}}',
                    },
                )
    columns = (
        "partition_key, tenant_id, tenant_bucket, run_id, score_model_version, total_score, "
        "calculated_priority, priority, priority_reason, contributions::text, input_fingerprint"
    )

    def stored() -> list[tuple]:
        with engine.connect() as connection:
            return [
                tuple(row)
                for row in connection.execute(
                    text(f"SELECT {columns} FROM apac_tenant_score_snapshots ORDER BY 1, 2")
                )
            ]

    before = stored()
    assert len(before) == 5
    command.upgrade(config, "0032")
    assert stored() == before
    command.downgrade(config, "0031")
    assert stored() == before
    upgrade(database_url)
    engine.dispose()


def test_scores_take_the_numbers_of_the_versions_they_were_scored_from(
    database_url: str,
) -> None:
    """0033 numbers the decisions and gives each score the numbers of the candidate, answer
    and decision versions valid on its day when they still hash to its fingerprint; a score
    whose input was written again since gets none (its tenant is scored again). Going down
    gives the kept score its fingerprint back."""
    from alembic import command

    config = alembic_config(database_url)
    command.downgrade(config, "0032")
    fingerprint = (
        "md5(ROW(d.tenant_bucket, d.priority_override, d.priority_reason, c.plan, c.seats, "
        "c.active_users_30d, c.last_active_at AT TIME ZONE 'UTC', e.employee_count, e.country, "
        "e.industry)::text || 'model-fp')"
    )
    engine = create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO apac_scoring_models (score_model_version, fingerprint, document, "
                "first_partition_key, first_run_id) "
                "VALUES ('v1', 'model-fp', '{}', '2026-11-28', 'run')"
            )
        )
        for tenant_id in ("t-kept", "t-changed"):
            values = {"t": tenant_id}
            connection.execute(
                text(
                    "INSERT INTO apac_tenant_candidate_versions (tenant_id, valid_from, "
                    "source_type, plan, seats, forced_sales_owned, run_id) "
                    "VALUES (:t, '2026-11-28', 'active', 'pro', 5, false, 'run')"
                ),
                values,
            )
            connection.execute(
                text(
                    "INSERT INTO apac_enriched_tenant_versions (tenant_id, valid_from, "
                    "country, enrichment_status, enrichment_error_count, run_id) "
                    "VALUES (:t, '2026-11-28', 'SG', 'enriched', 0, 'run')"
                ),
                values,
            )
            connection.execute(
                text(
                    "INSERT INTO apac_routing_decision_versions (tenant_id, valid_from, run_id, "
                    "tenant_bucket, routing_rule, ambiguous_match, sales_owned_match, moved, "
                    "decided_at, decided_for) VALUES (:t, '2026-11-28', 'run', 'active', "
                    "'active_default', false, false, false, now(), '2026-11-28')"
                ),
                values,
            )
            connection.execute(
                text(
                    "INSERT INTO apac_tenant_score_versions (tenant_id, valid_from, "
                    "tenant_bucket, score_model_version, input_fingerprint, run_id, "
                    "scored_for, scored_at, total_score, calculated_priority, priority, "
                    "contributions) SELECT d.tenant_id, '2026-11-28', 'active', 'v1', "
                    f"{fingerprint}, 'run', '2026-11-28', now(), 40, 'P2', 'P2', '{{}}' "
                    "FROM apac_routing_decision_versions d "
                    "JOIN apac_tenant_candidate_versions c ON c.tenant_id = d.tenant_id "
                    "JOIN apac_enriched_tenant_versions e ON e.tenant_id = d.tenant_id "
                    "WHERE d.tenant_id = :t"
                ),
                values,
            )
        # The candidates read again for the day after it was scored: another plan.
        connection.execute(
            text(
                "UPDATE apac_tenant_candidate_versions SET plan = 'free' "
                "WHERE tenant_id = 't-changed'"
            )
        )
        recorded = dict(
            connection.execute(
                text("SELECT tenant_id, input_fingerprint FROM apac_tenant_score_versions")
            ).all()
        )

    upgrade(database_url)
    with engine.connect() as connection:
        named = {
            row[0]: row[1:]
            for row in connection.execute(
                text(
                    "SELECT v.tenant_id, v.candidate_version = c.version_number, "
                    "v.answer_version = e.version_number, v.decision_version = d.version_number "
                    "FROM apac_tenant_score_versions v "
                    "JOIN apac_tenant_candidate_versions c ON c.tenant_id = v.tenant_id "
                    "JOIN apac_enriched_tenant_versions e ON e.tenant_id = v.tenant_id "
                    "JOIN apac_routing_decision_versions d ON d.tenant_id = v.tenant_id"
                )
            )
        }
        decision_numbers = connection.execute(
            text("SELECT count(DISTINCT version_number) FROM apac_routing_decision_versions")
        ).scalar_one()
    assert named == {"t-kept": (True, True, True), "t-changed": (None, None, None)}
    assert decision_numbers == 2

    command.downgrade(config, "0032")
    with engine.connect() as connection:
        restored = dict(
            connection.execute(
                text("SELECT tenant_id, input_fingerprint FROM apac_tenant_score_versions")
            ).all()
        )
    upgrade(database_url)
    engine.dispose()
    assert restored == {"t-kept": recorded["t-kept"], "t-changed": None}
