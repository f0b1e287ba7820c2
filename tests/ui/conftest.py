"""The real Dagster webserver and daemon (``dagster dev``) over a test database.

``dagster_ui`` starts ``python -m dagster dev`` in its own process group with:

* ``DAGSTER_HOME`` a temporary directory holding a copy of the project's ``dagster.yaml``
  (so the instance is the project's: Postgres storage, queued run coordinator, pools);
* ``MORPHEUS_DATABASE_URL`` a fresh migrated warehouse database with a small generated data
  set loaded as the DevOps source table;
* ``MORPHEUS_DAGSTER_DATABASE_URL`` a second, empty database for the instance storage;
* the HubSpot and Domain Intelligence emulators serving from this (test) process.

It yields once the GraphQL endpoint answers and the code location is loaded, and kills the
whole process group (webserver, daemon, code server, run workers) afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from morpheus_pipelines.db.embedded import EmbeddedPostgres
from morpheus_pipelines.db.urls import DAGSTER_URL_VARIABLE, with_driver
from morpheus_pipelines.devtools.demo.dataset import generate_dataset
from morpheus_pipelines.devtools.demo.runner import yesterday_cst
from morpheus_pipelines.devtools.emulators import DomainIntelEmulator, HubSpotEmulator
from tests.support.dagster_ui import (
    PROJECT_ROOT,
    DagsterUI,
    child_environment,
    free_port,
    load_demo_source,
    stop_process_group,
    wait_until_ready,
)
from tests.support.databases import admin_url


@pytest.fixture
def empty_database(pg_server: EmbeddedPostgres) -> Iterator[str]:
    """A fresh database with no schema at all (for the Dagster instance storage, which runs
    its own migrations and must not find the warehouse's ``alembic_version``)."""
    name = f"dagster_ui_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield pg_server.status().url(name)
    with psycopg.connect(admin_url(pg_server), autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def dagster_ui(database_url: str, empty_database: str) -> Iterator[DagsterUI]:
    day = yesterday_cst()
    dataset = generate_dataset(tenants=300, companies=40, partition_day=day)
    load_demo_source(database_url, dataset)

    root = Path(tempfile.mkdtemp(prefix="morpheus-ui-test-"))
    dagster_home = root / "dagster_home"
    morpheus_home = root / "morpheus_home"
    dagster_home.mkdir()
    morpheus_home.mkdir()
    shutil.copyfile(PROJECT_ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    dagster_database_url = with_driver(empty_database, "psycopg2")
    port = free_port()
    log_path = root / "dagster_dev.log"

    with (
        HubSpotEmulator(dataset.hubspot_data()) as hubspot,
        DomainIntelEmulator(dataset.domain_intel) as domain_intel,
    ):
        env = child_environment(
            {
                **dataset.environment(),
                "DAGSTER_HOME": str(dagster_home),
                "MORPHEUS_HOME": str(morpheus_home),
                "MORPHEUS_DATABASE_URL": database_url,
                DAGSTER_URL_VARIABLE: dagster_database_url,
                "HUBSPOT_BASE_URL": hubspot.base_url,
                "DOMAIN_INTELLIGENCE_BASE_URL": domain_intel.base_url,
                "HUBSPOT_REQUESTS_PER_10S": "1000",
            }
        )
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dagster",
                    "dev",
                    "-w",
                    str(PROJECT_ROOT / "workspace.yaml"),
                    "-p",
                    str(port),
                    "-h",
                    "127.0.0.1",
                ],
                cwd=root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        ui = DagsterUI(
            url=f"http://127.0.0.1:{port}",
            process=process,
            log_path=log_path,
            dataset=dataset,
            partition_day=day,
            warehouse_url=database_url,
            dagster_database_url=dagster_database_url,
            home=morpheus_home,
        )
        try:
            wait_until_ready(ui)
            yield ui
        finally:
            stop_process_group(process)
            shutil.rmtree(root, ignore_errors=True)
