"""``morpheus lead``: closing a lead by hand (what lead attribution credits, docs/leads.md)."""

from __future__ import annotations

import sys
import uuid
from datetime import UTC, datetime

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import ActionGroup


class AwareTime(click.ParamType):
    """An ISO 8601 time with a timezone."""

    name = "time"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, datetime):
            return value
        try:
            at = datetime.fromisoformat(str(value))
        except ValueError:
            self.fail(f"must be an ISO 8601 time, got {value!r}", param, ctx)
        if at.tzinfo is None:
            self.fail("needs a timezone, e.g. 2026-12-01T09:30:00+08:00", param, ctx)
        return at


@click.group(cls=ActionGroup)
def lead() -> None:
    """Close a lead as won, lost or closed (docs/leads.md)."""


@lead.command()
@click.argument("lead_id", type=click.UUID)
@click.option(
    "--status",
    type=click.Choice(["won", "lost", "closed"]),
    required=True,
    help="How the lead ended.",
)
@click.option("--at", type=AwareTime(), show_default="now", help="When, with a timezone.")
def close(lead_id: uuid.UUID, status: str, at: datetime | None) -> int:
    """Close the open lead LEAD_ID.

    Exit status 1 when no open lead has that id."""
    from morpheus_pipelines.crm.api.server import close_lead

    at = at or datetime.now(UTC)
    if not close_lead(checked_warehouse_url(), lead_id, status, at):
        print(f"error: no open lead {lead_id}", file=sys.stderr)
        return 1
    print(f"lead {lead_id} {status} at {at.isoformat()}")
    return 0
