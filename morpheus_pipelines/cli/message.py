"""``morpheus message``: putting failed messages back in the queue once their cause is mended
(docs/messages.md, "When a message fails")."""

from __future__ import annotations

import click

from morpheus_pipelines.cli.db import checked_warehouse_url
from morpheus_pipelines.cli.parsing import Group
from morpheus_pipelines.cli.setup_options import (
    Refused,
    run,
    subscription_id,
    subscription_option,
)


@click.group(cls=Group)
def message() -> None:
    """Queue a subscription's failed messages again."""


@message.command()
@subscription_option
@click.option(
    "--reason",
    "reasons",
    multiple=True,
    metavar="REASON",
    help="Only messages failed for this reason (repeatable). Default: retries_exhausted, "
    "template_missing, no_sender_number and no_recipient. send_outcome_unknown goes back "
    "only when named: the person may get the message twice. opted_out never does.",
)
@click.option(
    "--include-accepted",
    is_flag=True,
    help="Also the messages the provider accepted and then reported failed (delivery_failed, "
    "a template refused after the send): if its 'delivered' was lost, the person gets a "
    "second copy.",
)
def retry(subscription: str, reasons: tuple[str, ...], include_accepted: bool) -> int:
    """Queue the subscription's failed messages again, attempts reset; the next drain sends
    them, checking the WhatsApp window and the opt-out again. By default only messages the
    provider never accepted. Print `requeued N`, then one `requeued-reason N REASON` line per
    reason."""
    from functools import partial

    from morpheus_pipelines.crm.rules.message_sending import RequeueRefused, requeued_reasons
    from morpheus_pipelines.crm.steps.message_sending import requeue_failed_messages
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        try:
            requeued_reasons(reasons)  # refused before the database is opened
        except RequeueRefused as refused:
            raise Refused("--reason", str(refused)) from None
        counts = requeue_failed_messages(
            partial(get_session, checked_warehouse_url()),
            subscription_uuid,
            reasons,
            include_accepted=include_accepted,
        )
        print(f"requeued {sum(counts.values())}")
        for reason, count in sorted(counts.items()):
            print(f"requeued-reason {count}  {reason}")
        return 0

    return run(body)
