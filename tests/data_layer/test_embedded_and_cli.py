"""The embedded default: `morpheus db …` in real subprocesses, and two starts racing."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from morpheus_pipelines.db.embedded import EmbeddedPostgres, _binaries
from tests.support.databases import server_home

# These tests start embedded PostgreSQL servers of their own.
pytestmark = pytest.mark.database


def _morpheus(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MORPHEUS_")}
    env["MORPHEUS_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "morpheus_pipelines.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture
def home():
    root = server_home()
    yield root / "home"
    EmbeddedPostgres(root / "home").destroy()
    shutil.rmtree(root, ignore_errors=True)


def test_two_processes_starting_at_once_share_one_server(home: Path) -> None:
    home.mkdir()
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda _: _morpheus(home, "db", "start"), range(2)))
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    urls = {r.stdout.strip().splitlines()[-1] for r in results}
    assert len(urls) == 1  # the same server, not two

    url = _morpheus(home, "db", "url").stdout.strip()
    assert url == urls.pop()
    psql = subprocess.run(
        [str(_binaries() / "psql"), url, "-Atc", "SELECT current_database()"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert psql.stdout.strip() == "morpheus", psql.stderr
    dagster_url = _morpheus(home, "db", "url", "--database", "dagster").stdout.strip()
    with psycopg.connect(dagster_url) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("dagster",)

    status = _morpheus(home, "db", "status")
    assert status.returncode == 0 and "running" in status.stdout
    assert _morpheus(home, "db", "stop").stdout.strip() == "stopped"
    assert _morpheus(home, "db", "status").returncode == 3
    # The data survives a restart, on the same port (configured URLs keep working).
    assert _morpheus(home, "db", "start").returncode == 0
    assert _morpheus(home, "db", "url").stdout.strip() == url


def test_migrate_creates_every_warehouse_table(home: Path) -> None:
    result = _morpheus(home, "db", "migrate")
    assert result.returncode == 0, result.stderr
    url = _morpheus(home, "db", "url").stdout.strip()
    with psycopg.connect(url) as conn:
        tables = {
            row[0]
            for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        }
    assert {
        "apac_hubspot_target_accounts",
        "apac_hubspot_target_sync_state",
        "apac_hubspot_prepared_snapshots",
        "apac_active_tenants",
        "apac_sales_owned_tenants",
        "apac_tenant_score_versions",
        "alembic_version",
    } <= tables
    with psycopg.connect(url) as conn:
        views = {row[0] for row in conn.execute("SELECT viewname FROM pg_views")}
    assert "apac_tenant_score_snapshots" in views
    # Re-running is a no-op.
    assert _morpheus(home, "db", "migrate").returncode == 0


def test_external_database_url_starts_nothing(tmp_path: Path, database_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MORPHEUS_")}
    env.update(MORPHEUS_HOME=str(tmp_path / "unused"), MORPHEUS_DATABASE_URL=database_url)
    result = subprocess.run(
        [sys.executable, "-m", "morpheus_pipelines.cli", "db", "start"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    assert "nothing embedded" in result.stdout
    assert not (tmp_path / "unused" / "postgres" / "data").exists()


def _psql_as(user: str, url: str) -> subprocess.CompletedProcess[str]:
    """psql run as another OS user of this host, with no password file of its own."""
    return subprocess.run(
        [str(_binaries() / "psql"), url, "-Atc", "SELECT current_user"],
        user=user,
        env={"PGPASSFILE": "/dev/null", "HOME": "/", "PATH": "/usr/bin:/bin"},
        cwd="/",
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="running as another user needs root")
def test_another_os_user_without_the_password_is_refused(home: Path) -> None:
    server = EmbeddedPostgres(home)
    status = server.start()
    assert stat.S_IMODE(server.password_file.stat().st_mode) == 0o600
    assert f":{status.password}@" in status.url()
    without = f"postgresql://postgres@127.0.0.1:{status.port}/morpheus"

    refused = _psql_as("nobody", without)
    assert refused.returncode != 0 and "password" in refused.stderr, refused.stderr
    unreadable = subprocess.run(
        ["cat", str(server.password_file)], user="nobody", capture_output=True, timeout=30
    )
    assert unreadable.returncode != 0  # the password file is its owner's alone
    # The same user, host and port with the password get in: the refusal is the password's.
    admitted = _psql_as("nobody", status.url().replace("postgresql+psycopg", "postgresql"))
    assert admitted.stdout.strip() == "postgres", admitted.stderr


def test_a_data_directory_made_with_trust_is_given_a_password(home: Path) -> None:
    server = EmbeddedPostgres(home)
    server.start()
    hba = server.data_dir / "pg_hba.conf"
    hba.write_text(hba.read_text().replace("scram-sha-256", "trust"))  # as initdb --auth=trust
    server.password_file.unlink()
    server.stop()

    status = server.start()
    without = f"postgresql://postgres@127.0.0.1:{status.port}/morpheus"
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(without, connect_timeout=5)
    with psycopg.connect(status.url().replace("+psycopg", "")) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("morpheus",)
    url = _morpheus(home, "db", "url").stdout.strip()
    assert url == status.url().replace("+psycopg", "")
