"""``morpheus outbox``: what waits to be written to HubSpot, and re-queuing what failed."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import Group
from morpheus_pipelines.cli.setup_options import run, subscription_id, subscription_option


@click.group(cls=Group)
def outbox() -> None:
    """Show the HubSpot outbox of a subscription, or put its dead rows back in the queue."""


@outbox.command()
@subscription_option
def status(subscription: str) -> int:
    """Print the outbox's pending, due and dead rows, the rows written in the last day, the
    oldest pending row's age and the reasons of the dead rows, one a line."""
    from functools import partial

    from morpheus_pipelines.crm.steps.hubspot_outbox import outbox_backlog
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        now = datetime.now(UTC)
        backlog = outbox_backlog(
            partial(get_session, checked_warehouse_url()), subscription_uuid, now=now
        )
        oldest = backlog.oldest_pending_at
        print(f"pending     {backlog.pending}")
        print(f"due         {backlog.due}")
        print(f"dead        {backlog.dead}")
        print(f"done-1d     {backlog.done_since}")
        waited = f"{(now - oldest).total_seconds() / 60:.1f} min" if oldest else "-"
        print(f"oldest      {waited}")
        for reason, count in sorted(backlog.dead_reasons.items(), key=lambda item: -item[1]):
            print(f"dead-reason {count}  {reason}")
        return 0

    return run(body)


@outbox.command()
@subscription_option
def retry(subscription: str) -> int:
    """Put every dead row of the subscription back in the queue, its attempts reset; the next
    drain sends them. Print `requeued N`."""
    from morpheus_pipelines.crm.store import CrmStore
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        with get_session(checked_warehouse_url()) as session:
            count = CrmStore(session).outbox.requeue_dead(
                session, subscription_uuid, now=datetime.now(UTC)
            )
        print(f"requeued {count}")
        return 0

    return run(body)
