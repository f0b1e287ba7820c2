"""Software-defined assets of the APAC tenant signal pipeline."""

import warnings

import dagster as dg

# `backfill_policy` is marked beta in Dagster 1.13; single-run backfills are a deliberate
# choice here (docs/partitions.md), so the warning would only be noise on every import.
warnings.filterwarnings("ignore", category=dg.BetaWarning)
