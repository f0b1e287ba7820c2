"""The Dagster home directory and the environment every Dagster process needs.

Shared by ``morpheus dev`` (``cli.py``) and the demo runner, so neither of them imports the
other. The warehouse URL comes from :func:`~morpheus_pipelines.db.urls.warehouse_url` (the
configured URL, else the embedded server, started if needed).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from morpheus_pipelines.db.migrate import require_current_schema, upgrade
from morpheus_pipelines.db.urls import DAGSTER_URL_VARIABLE, dagster_url, warehouse_url
from morpheus_pipelines.platform.settings import Settings

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def prepare_dagster_environment(settings: Settings) -> dict[str, str]:
    """Start the database, and build the environment Dagster processes need. The embedded
    default is migrated here (``morpheus dev`` and ``demo`` own it); a configured database
    must already be at this version's schema (``morpheus db migrate``)."""
    url = warehouse_url(settings)
    if settings.uses_embedded_database:
        upgrade(url)
    else:
        require_current_schema(url)
    dagster_home = settings.home / "dagster_home"
    dagster_home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PROJECT_ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    env = dict(os.environ)
    env.update(
        {
            "DAGSTER_HOME": str(dagster_home),
            "MORPHEUS_HOME": str(settings.home),
            "MORPHEUS_DATABASE_URL": url,
            DAGSTER_URL_VARIABLE: dagster_url(settings),
        }
    )
    return env
