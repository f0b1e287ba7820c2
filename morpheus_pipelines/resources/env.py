"""How resources read DESIGN §2 variables.

A variable that is set is passed as ``dg.EnvVar`` so Dagster resolves it at run time and never
stores or displays its value (the HubSpot token stays out of run config and the UI). A variable
that is unset falls back to its documented default from ``settings.DEFAULTS``, because a plain
``dg.EnvVar`` would fail a run for a variable whose absence is meaningful (e.g. no Domain
Intelligence service configured).
"""

from __future__ import annotations

import os

import dagster as dg

from morpheus_pipelines.settings import DEFAULTS


def env_or_default(name: str) -> str | dg.EnvVar:
    if os.environ.get(name):
        return dg.EnvVar(name)
    return DEFAULTS[name]
