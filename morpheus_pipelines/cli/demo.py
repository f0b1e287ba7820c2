"""``morpheus demo``: the whole pipeline once, on generated data, embedded PostgreSQL and the
emulators."""

from __future__ import annotations

import click

from morpheus_pipelines.cli.parsing import Command


@click.command(cls=Command)
@click.option("--tenants", type=int, default=10_000, help="Tenants in the generated data.")
@click.option("--companies", type=int, default=500, help="Target companies in the generated data.")
def demo(tenants: int, companies: int) -> int:
    """Run the whole pipeline once on generated data."""
    from morpheus_pipelines.devtools.demo.runner import run_demo
    from morpheus_pipelines.platform.settings import load_settings

    return run_demo(load_settings(), tenants=tenants, companies=companies)
