"""Issue #38 (4, 5): only `morpheus db migrate` changes the schema, every other command checks
it; a database URL that is malformed, unreachable or refused, a malformed variable, or an
unset URL in production is one `error: …` line and a non-zero exit, the traceback only with
`--debug`. The commands run in-process (``main``) on the real embedded PostgreSQL."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path

import psycopg
import pytest
from alembic import command
from psycopg import sql
from sqlalchemy.engine import make_url

from morpheus_pipelines.cli import main
from morpheus_pipelines.db.migrate import alembic_config, current_revision, head_revision
from tests.support.databases import admin_url

LEAD = str(uuid.uuid4())
# Commands that read or write the warehouse, the API server among them.
COMMANDS = {
    "lead close": ["lead", "close", LEAD, "--status", "won"],
    "subscription list": ["subscription", "list"],
    "serve": ["serve", "--port", "0"],
    "api-key revoke": ["api-key", "revoke", str(uuid.uuid4())],
}


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Nothing configured but an empty MORPHEUS_HOME of this test's own."""
    import os

    for name in list(os.environ):
        if name.startswith(("MORPHEUS_", "HUBSPOT_", "META_", "DOMAIN_INTELLIGENCE_")):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    monkeypatch.setenv("MORPHEUS_HOME", str(home))
    return home


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    status = main(list(argv))
    return status, capsys.readouterr().err.splitlines()


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens once it is closed


@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_refuses_a_schema_behind_the_package_and_does_not_migrate_it(
    environment: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    database_url: str,
    name: str,
) -> None:
    command.downgrade(alembic_config(database_url), "-1")
    behind = current_revision(database_url)
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", database_url)

    status, lines = _run(capsys, *COMMANDS[name])

    assert status == 1
    assert lines == [
        f"error: the database schema is at {behind}, this version needs {head_revision()}: "
        "run `morpheus db migrate`"
    ]
    assert current_revision(database_url) == behind  # the command changed nothing


def test_only_db_migrate_brings_the_schema_forward(
    environment: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pg_server,
    database_factory,
) -> None:
    name = f"empty_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    url = pg_server.status().url(name)
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", url)
    try:
        status, lines = _run(capsys, *COMMANDS["lead close"])
        assert (status, len(lines)) == (1, 1)
        assert "the database schema is at none" in lines[0] and "morpheus db migrate" in lines[0]
        assert current_revision(url) is None

        assert main(["db", "migrate"]) == 0
        assert current_revision(url) == head_revision()
        status, lines = _run(capsys, *COMMANDS["lead close"])
        assert (status, lines) == (1, [f"error: no open lead {LEAD}"])  # past the check
    finally:
        from morpheus_pipelines.db.session import dispose_engines

        dispose_engines()
        with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def _wrong_password(database_url: str) -> str:
    return make_url(database_url).set(password="not-the-password").render_as_string(False)


URLS = {
    "malformed": lambda _: "postgresql+psycopg://x:sekrit@:notaport/db",
    "unreachable": lambda _: f"postgresql+psycopg://x:sekrit@127.0.0.1:{_closed_port()}/db",
    "wrong password": _wrong_password,
}


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize("problem", URLS)
def test_a_bad_database_url_is_one_line_naming_the_variable(
    environment: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    database_url: str,
    problem: str,
    name: str,
) -> None:
    url = URLS[problem](database_url)
    monkeypatch.setenv("MORPHEUS_DATABASE_URL", url)

    status, lines = _run(capsys, *COMMANDS[name])

    assert status == 1
    assert len(lines) == 1, lines
    (line,) = lines
    assert line.startswith("error: ") and "MORPHEUS_DATABASE_URL" in line
    password = make_url(database_url).password if problem == "wrong password" else "sekrit"
    assert "not-the-password" not in line and password not in line
    expected = {
        "malformed": "expected a PostgreSQL URL",
        "unreachable": "Connection refused",
        "wrong password": "password authentication failed",
    }[problem]
    assert expected in line


def test_debug_shows_the_traceback(environment: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "MORPHEUS_DATABASE_URL", f"postgresql+psycopg://x:y@127.0.0.1:{_closed_port()}/db"
    )
    with pytest.raises(Exception, match="Connection refused"):
        main(["--debug", "subscription", "list"])


def test_every_malformed_variable_is_named_at_once(
    environment: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HUBSPOT_RETRY_COUNT", "three")
    monkeypatch.setenv("HUBSPOT_REQUEST_TIMEOUT", "soon")
    monkeypatch.setenv("MORPHEUS_LEAD_STALE_DAYS", "-1")
    monkeypatch.setenv("MORPHEUS_ENV", "prod")

    status, lines = _run(capsys, "subscription", "list")

    assert status == 1
    assert lines == [
        "error: MORPHEUS_ENV: expected development or production, got 'prod'",
        "error: HUBSPOT_REQUEST_TIMEOUT: expected a number of seconds greater than 0, got 'soon'",
        "error: HUBSPOT_RETRY_COUNT: expected a whole number, 0 or more, got 'three'",
        "error: MORPHEUS_LEAD_STALE_DAYS: expected 0 (never) or a whole number of days, got '-1'",
    ]
    assert not environment.exists()  # nothing was started


@pytest.mark.parametrize("argv", [COMMANDS["subscription list"], ["db", "start"]])
def test_production_without_a_database_url_is_an_error_not_an_embedded_server(
    environment: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> None:
    monkeypatch.setenv("MORPHEUS_ENV", "production")

    status, lines = _run(capsys, *argv)

    assert status == 1
    assert len(lines) == 1 and lines[0].startswith("error: MORPHEUS_DATABASE_URL: expected")
    assert "MORPHEUS_ENV=production" in lines[0]
    assert not (environment / "postgres").exists()


def test_a_dagster_run_refuses_a_schema_behind_the_package_before_its_step_runs(
    database_url: str, tmp_path: Path
) -> None:
    import dagster as dg

    from morpheus_pipelines.assets.reports import weekly_metrics
    from morpheus_pipelines.db.migrate import upgrade
    from morpheus_pipelines.resources.warehouse import WarehouseResource

    command.downgrade(alembic_config(database_url), "-1")
    behind = current_revision(database_url)

    def run() -> dg.ExecuteInProcessResult:
        return dg.materialize(
            [weekly_metrics],
            partition_key="2026-11-23",
            resources={
                "warehouse": WarehouseResource(database_url=database_url, home=str(tmp_path))
            },
            raise_on_error=False,
        )

    refused = run()

    assert not refused.success
    (failure,) = [e for e in refused.all_events if e.event_type_value == "RESOURCE_INIT_FAILURE"]
    assert failure.event_specific_data.error.message.strip().endswith(
        f"the database schema is at {behind}, this version needs {head_revision()}: "
        "run `morpheus db migrate`"
    )
    assert refused.get_asset_materialization_events() == []  # the step body never ran
    assert current_revision(database_url) == behind

    upgrade(database_url)
    assert run().success  # a database found behind is asked again, not remembered as behind
