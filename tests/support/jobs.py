"""Reconstructable jobs for tests that need Dagster's re-execution (child processes import
these by name, so they live at module scope)."""

import dagster as dg


def apac_daily_job() -> dg.JobDefinition:
    from morpheus_pipelines.definitions import defs

    return defs.resolve_job_def("apac_daily_job")
