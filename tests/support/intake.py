"""Running ``morpheus serve``'s application over real HTTP on 127.0.0.1 for the tests, with a
subscription, reps and an API key."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from sqlalchemy import func, select

from morpheus_pipelines.crm.api.app import create_app
from morpheus_pipelines.crm.api.http_server import DEFAULT_LIMITS, ServerLimits
from morpheus_pipelines.crm.api.server import create_api_key
from morpheus_pipelines.crm.api.settings import IntakeSettings
from morpheus_pipelines.crm.models import (
    Lead,
    RoutingPool,
    RoutingPoolMember,
    RoutingPoolRule,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.demo.intake import serving_in_thread
from tests.support.crm_round_robin import add_rep


@contextmanager
def serving(
    settings: IntakeSettings, limits: ServerLimits = DEFAULT_LIMITS
) -> Iterator[tuple[str, Any]]:
    """The app under uvicorn in a thread; yields (base URL, app)."""
    app = create_app(settings)
    with serving_in_thread(app, limits) as base:
        yield base, app


@dataclass
class Tenant:
    """A subscription with reps, seen through its own API key."""

    url: str
    subscription_id: uuid.UUID = field(default_factory=uuid.uuid4)
    key: str = ""
    key_id: uuid.UUID | None = None

    def __post_init__(self) -> None:
        with get_session(self.url) as session:
            session.add(Subscription(id=self.subscription_id, name="Acme"))
        self.key_id, self.key = create_api_key(self.url, self.subscription_id, "tests")

    def add_rep(self, email: str, owner_id: str | None, *, active: bool = True) -> int:
        with get_session(self.url) as session:
            rep = add_rep(
                session, self.subscription_id, email, hubspot_owner_id=owner_id, is_active=active
            )
            return rep.id

    def add_pool(
        self,
        name: str,
        members: dict[int, int],
        *,
        default: bool = False,
        fallback: int | None = None,
        rules: list[dict[str, Any]] = (),
    ) -> int:
        with get_session(self.url) as session:
            pool = RoutingPool(
                subscriptionId=self.subscription_id,
                name=name,
                isDefault=default,
                fallbackSalesRepId=fallback,
            )
            session.add(pool)
            session.flush()
            for rep_id, weight in members.items():
                session.add(RoutingPoolMember(poolId=pool.id, salesRepId=rep_id, weight=weight))
            for rule in rules:
                session.add(
                    RoutingPoolRule(subscriptionId=self.subscription_id, poolId=pool.id, **rule)
                )
            return pool.id

    def set_subscription_fallback(self, rep_id: int | None) -> None:
        with get_session(self.url) as session:
            session.get(Subscription, self.subscription_id).fallbackSalesRepId = rep_id

    def set_active(self, rep_id: int, active: bool) -> None:
        with get_session(self.url) as session:
            session.get(SalesRep, rep_id).isActive = active

    def lead_body(self, submission: str = "s-1", **overrides: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "subscription_id": str(self.subscription_id),
            "source": "web-form",
            "source_submission_id": submission,
            "campaign_ids": [],
            "contact": {"email": "Buyer@Example.com", "phone": "+65 9123 4567"},
        }
        body.update(overrides)
        return body

    def leads(self) -> int:
        with get_session(self.url) as session:
            return session.scalar(
                select(func.count())
                .select_from(Lead)
                .where(Lead.subscriptionId == self.subscription_id)
            )

    def open_leads(self) -> dict[int, int]:
        with get_session(self.url) as session:
            rows = session.execute(
                select(SalesRep.id, SalesRep.openLeads).where(
                    SalesRep.subscriptionId == self.subscription_id
                )
            )
            return {rep_id: n for rep_id, n in rows}


def client(key: str | None) -> requests.Session:
    session = requests.Session()
    if key:
        session.headers["Authorization"] = f"Bearer {key}"
    return session


def intake_settings(url: str, **overrides: Any) -> IntakeSettings:
    return IntakeSettings(database_url=url, listen_url=libpq_url(url), pool_size=10, **overrides)


class Clock:
    """A clock the test moves: the service's idea of "now"."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


def create_lead(http: requests.Session, base: str, tenant: Tenant, submission: str) -> str:
    answer = http.post(f"{base}/v1/leads", json=tenant.lead_body(submission))
    assert answer.status_code == 201, answer.text
    return answer.json()["lead_id"]


def freeze_owner_cache(app: Any) -> int:
    """Stop the service hearing routing changes and mark its view fresh: until the TTL it
    proposes what it last loaded, as in the moment between a change and its notification.
    Returns the view's refresh count; a test asserts it unchanged at the end, so it cannot
    pass on a reload instead of on the guard it is about."""
    listener = app.state.listener
    listener.stop()
    assert not listener._thread.is_alive(), "the routing listener did not stop"
    directory = app.state.directory
    directory._loaded_generation = directory._generation
    return directory.refreshes


def problem_of(answer: requests.Response, status: int, error: str) -> dict[str, Any]:
    """The RFC 9457 problem an error answer carries (docs/leads.md, "Errors"), checked: its
    media type, the members every problem has, and the ``error`` code clients match on."""
    assert answer.status_code == status, answer.text
    assert answer.headers["Content-Type"] == "application/problem+json", answer.headers
    body = answer.json()
    assert body["status"] == status and body["error"] == error, body
    assert body["type"] and body["title"], body
    return body
