"""``morpheus emulate``: an emulated HubSpot or Domain Intelligence on loopback, until Ctrl-C or
SIGTERM (the emulators the tests and ``morpheus dev`` use)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from morpheus_pipelines.cli.parsing import ActionGroup


def _emulator_options(command: Callable[..., Any]) -> Callable[..., Any]:
    command = click.option("--data", metavar="FILE", help="A JSON data file to serve.")(command)
    return click.option("--port", type=int, default=0, help="The port; 0 picks a free one.")(
        command
    )


def _arguments(port: int, data: str | None) -> list[str]:
    return ["--port", str(port), *(["--data", data] if data else [])]


@click.group(cls=ActionGroup)
def emulate() -> None:
    """Serve an emulated HubSpot or Domain Intelligence."""


@emulate.command()
@_emulator_options
def hubspot(port: int, data: str | None) -> int:
    """The HubSpot emulator.

    Without --data it serves a small sample portal."""
    from morpheus_pipelines.devtools.emulators.hubspot import main as emulator_main

    return emulator_main(_arguments(port, data))


@emulate.command(name="domain-intel")
@_emulator_options
def domain_intel(port: int, data: str | None) -> int:
    """The Domain Intelligence emulator.

    Without --data it knows nobody."""
    from morpheus_pipelines.devtools.emulators.domain_intel import main as emulator_main

    return emulator_main(_arguments(port, data))
