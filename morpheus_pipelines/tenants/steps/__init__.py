"""Plain-Python workflows that combine clients, rules and repositories (no Dagster import)."""
