"""Reconstructable jobs for tests that need Dagster's re-execution (child processes import
these by name, so they live at module scope)."""

import importlib

import dagster as dg


def apac_daily_job() -> dg.JobDefinition:
    """The daily job as a code location loaded now would build it: resources read their
    settings from the environment when the definitions module loads, so reload it to pick up
    the environment the test set."""
    import morpheus_pipelines.definitions as definitions

    return importlib.reload(definitions).defs.resolve_job_def("apac_daily_job")
