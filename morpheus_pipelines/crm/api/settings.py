"""What one intake application is built from (``create_app``): the database, the budgets, the
owner cache and the clock; ``morpheus serve`` fills it in from the environment (``asgi``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

DEFAULT_REQUESTS_PER_MINUTE = 6_000
DEFAULT_AUTH_FAILURES_PER_MINUTE = 30
DEFAULT_ORIGIN_REQUESTS_PER_MINUTE = 600


@dataclass
class IntakeSettings:
    database_url: str
    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE
    auth_failures_per_minute: int = DEFAULT_AUTH_FAILURES_PER_MINUTE
    # Leads one browser origin may post with publishable keys, whatever key or address.
    origin_requests_per_minute: int = DEFAULT_ORIGIN_REQUESTS_PER_MINUTE
    body_read_timeout: float = 15.0  # seconds for the whole body, once the head is read
    owner_cache: bool = True
    listen_url: str | None = None  # libpq URL for LISTEN; None = TTL only
    pool_size: int = 20
    # Connections of the shared request budget, used from the event loop, none beyond: a
    # take waits a moment for one rather than opening a connection (a server process).
    budget_pool_size: int = 8
    # Seconds before the usual lead's statement (on the event loop) is given up: a 503.
    lead_statement_timeout: float = 30.0
    # HubSpot webhooks: the app's client secret (signs every delivery; empty refuses them all)
    # and the public URL HubSpot was given, which the signature covers (None: the request's).
    hubspot_client_secret: str = field(default="", repr=False)
    public_url: str | None = None
    # Meta's webhooks: the app secret that signs every delivery and the token of the
    # verification handshake (empty refuses them all).
    meta_app_secret: str = field(default="", repr=False)
    meta_verify_token: str = field(default="", repr=False)
    # ``POST /benchmark/floor`` (:mod:`.floor`): for the intake benchmark only.
    benchmark_floor: bool = False
    # What "now" is for the WhatsApp window and the future-timestamp check: a test moves it.
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
