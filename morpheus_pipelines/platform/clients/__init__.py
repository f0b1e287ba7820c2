"""HTTP clients of the external services (no Dagster import; resources wrap them)."""
