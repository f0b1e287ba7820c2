"""``morpheus dev``: the Dagster UI and daemon on the embedded default, with the emulators and
the demo data, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal

import click

from morpheus_pipelines.cli.parsing import Command


@click.command(cls=Command)
@click.option("--host", default="127.0.0.1", help="The address the Dagster UI listens on.")
@click.option("--port", type=int, default=3000, help="The Dagster UI's port.")
@click.option("--tenants", type=int, default=10_000, help="Tenants in the generated demo data.")
@click.option(
    "--companies", type=int, default=500, help="Target companies in the generated demo data."
)
@click.option(
    "--no-demo-runs",
    is_flag=True,
    help="Do not materialise the demo partitions on a Dagster instance without runs.",
)
@click.option(
    "--configured",
    is_flag=True,
    help="Use HubSpot, Domain Intelligence and the source database as configured in the "
    "environment instead of the emulators and generated data.",
)
def dev(
    host: str, port: int, tenants: int, companies: int, no_demo_runs: bool, configured: bool
) -> int:
    """The Dagster UI and daemon, with emulators and demo data.

    On the embedded database, with the HubSpot and Domain Intelligence emulators and generated
    data (unless --configured); a Dagster instance without runs first gets the demo runs.
    Ctrl-C or SIGTERM stops everything it started."""
    # Until `dagster dev` runs, SIGTERM is Ctrl-C: the emulators and the database sessions
    # are closed on the way out instead of the process vanishing mid-statement.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    from morpheus_pipelines.cli.supervisor import run_dagster_dev
    from morpheus_pipelines.db.dagster_home import prepare_dagster_environment
    from morpheus_pipelines.platform.settings import load_settings

    settings = load_settings()
    if configured:
        return run_dagster_dev(prepare_dagster_environment(settings), host=host, port=port)
    from morpheus_pipelines.devtools.demo.runner import (
        demo_environment,
        materialise_if_new_instance,
    )

    with demo_environment(settings, tenants=tenants, companies=companies) as demo:
        print(
            f"HubSpot emulator on {demo.hubspot.base_url}, Domain Intelligence emulator on "
            f"{demo.domain_intel.base_url}, demo data loaded ({tenants:,} tenants)"
        )
        if no_demo_runs:
            print("  --no-demo-runs: not materialising the demo partitions")
        elif materialise_if_new_instance(demo.partition_key) is False:
            print("  some demo runs failed: see them in the UI")
        return run_dagster_dev(demo.env, host=host, port=port)
