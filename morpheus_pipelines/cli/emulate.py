"""``morpheus emulate``: an emulated HubSpot, Domain Intelligence or Meta Graph API on loopback,
until Ctrl-C or SIGTERM (the emulators the tests and ``morpheus dev`` use)."""

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
    """Serve an emulated HubSpot, Domain Intelligence or Meta Graph API."""


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


@emulate.command()
@_emulator_options
@click.option("--token", help="The valid access token (default: the emulator's own).")
@click.option("--app-secret", help="The app secret the webhooks are signed with.")
@click.option("--webhook-url", help="Our endpoint the webhooks are posted to.")
@click.option(
    "--auto-status",
    is_flag=True,
    help="Follow every accepted send with 'sent' and 'delivered' status webhooks.",
)
@click.option(
    "--reengagement-failure",
    type=click.Choice(["response", "webhook"]),
    default="response",
    show_default=True,
    help="How a free-form message outside the 24-hour window fails: 131047 in the response, "
    "or accepted and then a 'failed' status webhook.",
)
def meta(
    port: int,
    data: str | None,
    token: str | None,
    app_secret: str | None,
    webhook_url: str | None,
    auto_status: bool,
    reengagement_failure: str,
) -> int:
    """The Meta Graph API emulator: Lead Ads lead retrieval and WhatsApp Cloud API sends.

    Without --data it has one business number, the hello_world template and no leads;
    webhooks need --app-secret and --webhook-url."""
    from morpheus_pipelines.devtools.emulators.meta_graph import main as emulator_main

    options = [
        *(["--token", token] if token else []),
        *(["--app-secret", app_secret] if app_secret else []),
        *(["--webhook-url", webhook_url] if webhook_url else []),
        *(["--auto-status"] if auto_status else []),
        "--reengagement-failure",
        reengagement_failure,
    ]
    return emulator_main([*_arguments(port, data), *options])
