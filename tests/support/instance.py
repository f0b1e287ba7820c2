"""The project's Dagster instance (``dagster.yaml``: Postgres storage) and the code location
as a deployment loads it, for tests that evaluate checks through the instance's event log."""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from morpheus_pipelines.db.urls import DAGSTER_URL_VARIABLE

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent


@contextmanager
def project_instance(
    database_url: str,
    instance_database: str,
    tmp_path: Path,
    settings: Mapping[str, Any] | None = None,
) -> Iterator[tuple[dg.DagsterInstance, dg.Definitions]]:
    """The instance on an empty database, and the definitions loaded in this environment
    (resources read the environment when the module loads), reading the test warehouse.
    ``settings`` are instance settings added to the project's ``dagster.yaml``."""
    import morpheus_pipelines.definitions as definitions

    dagster_home = tmp_path / "dagster_home"
    dagster_home.mkdir()
    shutil.copyfile(PROJECT_ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    if settings:
        config = yaml.safe_load((PROJECT_ROOT / "dagster.yaml").read_text())
        (dagster_home / "dagster.yaml").write_text(yaml.safe_dump({**config, **settings}))
    with pytest.MonkeyPatch.context() as env:
        for name in list(os.environ):
            if name.startswith(("HUBSPOT_", "MORPHEUS_", "DAGSTER_")):
                env.delenv(name)
        env.setenv("DAGSTER_HOME", str(dagster_home))
        env.setenv("MORPHEUS_HOME", str(tmp_path / "morpheus_home"))
        env.setenv("MORPHEUS_DATABASE_URL", database_url)
        env.setenv(DAGSTER_URL_VARIABLE, instance_database)
        try:
            with dg.DagsterInstance.get() as instance:
                yield instance, importlib.reload(definitions).defs
        finally:
            # The environment is back: leave the module as the rest of the session expects.
            env.undo()
            importlib.reload(definitions)
