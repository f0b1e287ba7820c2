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
    "template_missing, no_sender_number and no_recipient, which certainly sent nothing. "
    "send_outcome_unknown and delivery_failed go back only when named: the person may get "
    "the message twice. opted_out never does.",
)
def retry(subscription: str, reasons: tuple[str, ...]) -> int:
    """Queue the subscription's failed messages again, attempts reset; the next drain sends
    them, checking the WhatsApp window and the opt-out again. Print `requeued N`, then one
    `requeued-reason N REASON` line per reason."""
    from functools import partial

    from morpheus_pipelines.crm.rules.message_sending import RequeueRefused
    from morpheus_pipelines.crm.steps.message_sending import requeue_failed_messages
    from morpheus_pipelines.db.session import get_session

    def body() -> int:
        subscription_uuid = subscription_id(subscription)
        try:
            counts = requeue_failed_messages(
                partial(get_session, checked_warehouse_url()), subscription_uuid, reasons
            )
        except RequeueRefused as refused:
            raise Refused("--reason", str(refused)) from None
        print(f"requeued {sum(counts.values())}")
        for reason, count in sorted(counts.items()):
            print(f"requeued-reason {count}  {reason}")
        return 0

    return run(body)
