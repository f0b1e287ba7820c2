"""What the portal-setup commands (``segment``, ``pool``, ``rep``) share: options read as text
and checked here, so that every bad value is one line, ``error: OPTION: why``, exit status 2,
instead of Click's usage text."""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from morpheus_pipelines.platform.clients.hubspot import HubSpotClient

# Larger than any BIGINT: no id of a row can be it.
_BIGINT = 2**63


class Refused(Exception):
    """A bad value of ``option``; the command prints it as one line and exits 2."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def refuse(option: str, message: str) -> int:
    print(f"error: {option}: {message}", file=sys.stderr)
    return 2


def subscription_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--subscription", metavar="UUID", required=True, help="The subscription's id."
    )(command)


def subscription_id(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value.strip())
    except ValueError:
        raise Refused("--subscription", f"{value!r} is not a subscription id (a UUID)") from None


def whole_number(option: str, value: str | None, *, positive: bool = True) -> int | None:
    """``value`` as an integer (``None`` stays ``None``); refused unless it is a whole number
    in BIGINT's range, and positive when ``positive``."""
    if value is None:
        return None
    text = value.strip()
    if not re.fullmatch(r"-?[0-9]+", text):
        word = "a positive integer" if positive else "a whole number"
        raise Refused(option, f"must be {word}")
    number = int(text)
    if positive and number <= 0:
        raise Refused(option, "must be a positive integer")
    if abs(number) >= _BIGINT:
        raise Refused(option, f"{number} is out of range")
    return number


def hubspot_list_id(option: str, value: str | None) -> str | None:
    """A HubSpot list id: a positive whole number, kept as text as HubSpot sends it."""
    number = whole_number(option, value)
    return None if number is None else str(number)


def hubspot_client() -> HubSpotClient | None:
    """A HubSpot client with the snapshot's settings (``HUBSPOT_*``, README "Configuration"),
    or ``None`` when no token is configured."""
    from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
    from morpheus_pipelines.platform.settings import load_settings

    settings = load_settings()
    token = settings.hubspot_private_app_token.get_secret_value()
    if not token:
        return None
    return HubSpotClient(
        settings.hubspot_base_url,
        token,
        read_timeout=settings.hubspot_request_timeout,
        retry_count=settings.hubspot_retry_count,
        requests_per_10s=settings.hubspot_requests_per_10s,
        # A person is waiting: a few seconds of back-off, not a batch job's half-minute.
        max_backoff=2.0,
    )


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def run(step: Callable[[], int]) -> int:
    """Run a command's body; a :class:`Refused` or a step's ``SetupRefused`` is one line."""
    from morpheus_pipelines.crm.steps.portal_setup import SetupRefused

    try:
        return step()
    except (Refused, SetupRefused) as refused:
        return refuse(refused.option, str(refused))


def word(value: object) -> str:
    """A value as one greppable word: as is when it has no space or quote, else quoted."""
    text = "-" if value is None else str(value)
    if text and not any(c.isspace() or c in "'\"=" for c in text):
        return text
    return repr(text)
