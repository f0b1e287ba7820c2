"""Sensors: run failures and snapshot health."""
