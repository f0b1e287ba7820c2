"""The ``morpheus`` command (Click): one module per command group, put together here.

``main(argv)`` runs a command line and returns its exit status instead of exiting, so the
tests call it in-process; the ``morpheus`` script and ``python -m morpheus_pipelines.cli``
exit with it.
"""

from __future__ import annotations

import click

from morpheus_pipelines.cli.api_key import api_key
from morpheus_pipelines.cli.automation_rule import automation_rule
from morpheus_pipelines.cli.db import db
from morpheus_pipelines.cli.demo import demo
from morpheus_pipelines.cli.dev import dev
from morpheus_pipelines.cli.emulate import emulate
from morpheus_pipelines.cli.lead import lead
from morpheus_pipelines.cli.message import message
from morpheus_pipelines.cli.outbox import outbox
from morpheus_pipelines.cli.parsing import CONTEXT_SETTINGS, RootGroup
from morpheus_pipelines.cli.pool import pool
from morpheus_pipelines.cli.rep import rep
from morpheus_pipelines.cli.scoring import scoring
from morpheus_pipelines.cli.segment import segment
from morpheus_pipelines.cli.serve import serve
from morpheus_pipelines.cli.subscription import subscription

PACKAGE = "morpheus-pipelines"


@click.group(cls=RootGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name=PACKAGE, prog_name="morpheus", message="%(prog)s %(version)s")
@click.option(
    "--debug",
    is_flag=True,
    help="Show the traceback of a configuration or database error instead of one line.",
)
def morpheus(debug: bool) -> None:
    """Morpheus Pipelines: the warehouse database, the Dagster UI, the demo, a portal's setup,
    the lead-intake API and the emulators. `morpheus COMMAND --help` tells a command's options."""


for command in (
    db,
    dev,
    demo,
    subscription,
    segment,
    pool,
    rep,
    scoring,
    serve,
    api_key,
    automation_rule,
    lead,
    outbox,
    message,
    emulate,
):
    morpheus.add_command(command)


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: the process's arguments); return the exit
    status: the command's own, 2 for a usage error (said on stderr), 0 for --help and
    --version, 130 on Ctrl-C."""
    try:
        status = morpheus.main(args=argv, prog_name="morpheus", standalone_mode=False)
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.Abort:
        click.echo("Aborted!", err=True)
        return 1
    return status if isinstance(status, int) else 0
