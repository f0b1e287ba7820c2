"""``morpheus serve``: the lead-intake HTTP API (docs/leads.md)."""

from __future__ import annotations

import click

from morpheus_pipelines.cli.parsing import Command


@click.command(cls=Command)
@click.option("--host", default="127.0.0.1", help="The address the API listens on.")
@click.option("--port", type=int, default=8080, help="The API's port.")
@click.option(
    "--no-owner-cache",
    is_flag=True,
    help="Look pool members up with a query per lead instead of the in-process cache.",
)
@click.option("--workers", type=int, default=2, help="Worker processes.")
def serve(host: str, port: int, no_owner_cache: bool, workers: int) -> int:
    """The lead-intake API (docs/leads.md).

    Serves until Ctrl-C or SIGTERM, finishing the requests in flight."""
    from morpheus_pipelines.crm.api.server import serve as serve_api
    from morpheus_pipelines.platform.settings import load_settings

    return serve_api(
        load_settings(), host=host, port=port, owner_cache=not no_owner_cache, workers=workers
    )
