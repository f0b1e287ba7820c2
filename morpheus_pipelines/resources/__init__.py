"""Dagster resources: configuration comes from the environment (DESIGN §2) via ``dg.EnvVar``."""
