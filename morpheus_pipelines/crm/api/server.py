"""``morpheus serve`` and ``morpheus api-key`` (docs/leads.md)."""

from __future__ import annotations

import os
import uuid
from datetime import datetime

from morpheus_pipelines.crm.api.keys import key_hash, new_key
from morpheus_pipelines.crm.repositories.intake_keys import IntakeApiKeyRepository
from morpheus_pipelines.crm.repositories.leads import LeadRepository
from morpheus_pipelines.db.migrate import require_current_schema
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import warehouse_url
from morpheus_pipelines.platform.observability.events import log_event
from morpheus_pipelines.platform.settings import Settings

_keys = IntakeApiKeyRepository()
_leads = LeadRepository()


def serve(
    settings: Settings, *, host: str, port: int, owner_cache: bool = True, workers: int = 2
) -> int:
    """Serve until SIGINT/SIGTERM; uvicorn finishes the requests in flight (5 s at most).

    Two worker processes by default: the request's Python work is the bottleneck and one
    process uses one core (docs/performance.md, "Lead intake")."""
    import uvicorn

    from morpheus_pipelines.crm.api.asgi import OWNER_CACHE_VARIABLE
    from morpheus_pipelines.crm.api.http_server import uvicorn_options

    url = warehouse_url(settings)  # starts the embedded server when nothing is configured
    require_current_schema(url)  # the API needs no DDL rights: `morpheus db migrate` has them
    os.environ[OWNER_CACHE_VARIABLE] = "1" if owner_cache else "0"
    if settings.uses_embedded_database:
        os.environ["MORPHEUS_DATABASE_URL"] = url  # the workers must not start another
    log_event("intake_serving", host=host, port=port, owner_cache=owner_cache, workers=workers)
    uvicorn.run(
        "morpheus_pipelines.crm.api.asgi:app_from_environment",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        timeout_graceful_shutdown=5,
        **uvicorn_options(),
    )
    return 0


def create_api_key(
    url: str, subscription_id: uuid.UUID, label: str | None, *, origins: tuple[str, ...] = ()
) -> tuple[uuid.UUID, str]:
    """A new key for the subscription: ``(key id, key)``; only the hash is stored. With
    ``origins`` (normalised: :func:`~morpheus_pipelines.platform.text.origins.normalise_origin`)
    a publishable key, which may only create leads and only from those origins."""
    key_id = uuid.uuid4()
    key = new_key(key_id, publishable=bool(origins))
    with get_session(url) as session:
        _keys.create(session, key_id, subscription_id, key_hash(key), label, origins=origins)
    return key_id, key


def close_lead(url: str, lead_id: uuid.UUID, status: str, at: datetime) -> bool:
    """Mark an open lead won, lost or closed at ``at`` (what ``lead_attribution`` credits,
    and what stops the automations); ``False`` when it is not open."""
    with get_session(url) as session:
        return _leads.close(session, lead_id, status=status, at=at)


def revoke_api_key(url: str, key_id: uuid.UUID) -> bool:
    with get_session(url) as session:
        return _keys.revoke(session, key_id)
