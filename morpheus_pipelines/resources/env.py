"""How resources read the documented variables (README, "Configuration").

A variable that is set is passed as ``dg.EnvVar`` (``dg.EnvVar.int`` for whole numbers), so
Dagster resolves it at run time and never stores or displays its value: the HubSpot token stays
out of run config and the UI. A variable that is unset falls back to its documented default
from ``settings.DEFAULTS``, because a plain ``dg.EnvVar`` would fail a run for a variable whose
absence is meaningful (no Domain Intelligence service configured, say). Dagster has no float
``EnvVar``; the one float setting (``HUBSPOT_REQUEST_TIMEOUT``) is read when the code location
loads, through ``settings.load_settings``, which also rejects a malformed number by name.
"""

from __future__ import annotations

import os

import dagster as dg

from morpheus_pipelines.platform.settings import DEFAULTS


def env_or_default(name: str) -> str | dg.EnvVar:
    if os.environ.get(name):
        return dg.EnvVar(name)
    return DEFAULTS[name]


def env_int_or_default(name: str) -> int:
    if os.environ.get(name):
        return dg.EnvVar.int(name)
    return int(DEFAULTS[name])
