"""Fixtures for the emulator tests: running emulators, sessions, OpenAPI validation."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests
from openapi_schema_validator import OAS30Validator, oas30_format_checker

from morpheus_pipelines.devtools.emulators import (
    DomainIntelEmulator,
    HubSpotEmulator,
    MetaGraphEmulator,
    build_hubspot_data,
)
from tests.support.meta_graph import (
    META_APP_SECRET,
    META_TOKEN,
    DateClock,
    WebhookReceiver,
    start_receiver,
)

Emulator = TypeVar("Emulator", HubSpotEmulator, MetaGraphEmulator)

TOKEN = "pat-na1-test-token"
LIST_ID = "19544"
COMPANY_COUNT = 260  # > 250 so memberships need two pages at the maximum limit
OPENAPI_DIR = Path(__file__).resolve().parent / "hubspot-openapi"  # HubSpot's specs, unchanged


def openapi_dir() -> Path:
    """``$HUBSPOT_OPENAPI_DIR`` when set, else the in-repo copy :data:`OPENAPI_DIR`.

    ``tests/emulators/hubspot-openapi`` holds HubSpot's public OpenAPI specs copied unchanged
    (see the README there): the repository needs nothing outside itself to test.
    """
    env = os.environ.get("HUBSPOT_OPENAPI_DIR")
    if env:
        if not Path(env).is_dir():
            pytest.fail(f"$HUBSPOT_OPENAPI_DIR={env} is not a directory")
        return Path(env)
    if OPENAPI_DIR.is_dir():
        return OPENAPI_DIR
    pytest.fail(f"HubSpot OpenAPI files not found at {OPENAPI_DIR}")


@cache
def load_spec(name: str) -> dict[str, Any]:
    """One of lists.json / companies.json / owners.json, parsed."""
    return json.loads((openapi_dir() / name).read_text(encoding="utf-8"))


def company_rows(count: int = COMPANY_COUNT) -> list[dict[str, Any]]:
    """Flat company dicts with every property the sync reads."""
    return [
        {
            "id": str(1000 + i),
            "name": f"APAC Company {i}",
            "domain": f"company{i}.com.sg",
            "website": f"https://www.company{i}.com.sg",
            "hs_additional_domains": f"company{i}.sg;company{i}.asia",
            "portal_id__c": 500000 + i,  # numbers are served as strings
            "account_id__c": f"ACC-{i:05d}",
            "account_allias__c": f"C{i}",
            "hs_lastmodifieddate": "2026-07-01T00:00:00.000Z",
        }
        for i in range(count)
    ]


def hubspot_data(count: int = COMPANY_COUNT) -> dict[str, Any]:
    """A portal whose list 19544 holds ``count`` companies, plus two owners."""
    return build_hubspot_data(
        company_rows(count),
        list_id=LIST_ID,
        token=TOKEN,
        membership_timestamp="2026-07-01T08:00:00.000Z",
        owners=[
            {"id": "1", "email": "mei@example.com", "firstName": "Mei", "userId": 11},
            {"id": "2", "email": "raj@example.com", "lastName": "Raj", "userId": 12},
            {"id": "3", "email": "gone@example.com", "archived": True},
        ],
    )


@pytest.fixture
def dataset() -> Callable[..., dict[str, Any]]:
    """``dataset(count=260)``: emulator data for list 19544 (see :func:`hubspot_data`)."""
    return hubspot_data


def _started(build: Callable[..., Emulator]) -> Iterator[Callable[..., Emulator]]:
    """Yield a factory of started emulators; stop them after the test, expecting no emulator
    errors."""
    started: list[Emulator] = []

    def _make(*args: Any, **kwargs: Any) -> Emulator:
        emu = build(*args, **kwargs).start()
        started.append(emu)
        return emu

    yield _make
    for emu in started:
        emu.stop()
        assert emu.errors == []


def _bearer_session(token: str) -> Iterator[requests.Session]:
    with requests.Session() as s:
        s.headers["Authorization"] = f"Bearer {token}"
        yield s


@pytest.fixture
def make_hubspot() -> Iterator[Callable[..., HubSpotEmulator]]:
    """``make_hubspot(data=None, **kwargs)``: a started emulator, stopped after the test."""

    def build(data: dict[str, Any] | None = None, **kwargs: Any) -> HubSpotEmulator:
        return HubSpotEmulator(hubspot_data() if data is None else data, **kwargs)

    yield from _started(build)


@pytest.fixture
def hubspot(make_hubspot: Callable[..., HubSpotEmulator]) -> HubSpotEmulator:
    """A running HubSpot emulator with :func:`hubspot_data`; token ``TOKEN``."""
    return make_hubspot()


@pytest.fixture
def session() -> Iterator[requests.Session]:
    """A session sending the right bearer token."""
    yield from _bearer_session(TOKEN)


DOMAIN_INTEL_DATA: dict[str, Any] = {
    "tenants": {
        "t-1": {
            "official_website": "https://www.lioncity.com.sg",
            "company_name": "Lion City Pte Ltd",
            "industry": "Logistics",
            "employee_count": 120,
            "country": "SG",
        },
        "t-2": {"official_website": "https://harbour.com.au", "country": "AU"},
    },
    "domains": {
        "sakura.co.jp": {"company_name": "Sakura KK", "country": "JP", "employee_count": "45"}
    },
}


@pytest.fixture
def domain_intel_data() -> dict[str, Any]:
    """Data knowing tenants t-1 and t-2 and the domain sakura.co.jp."""
    return copy.deepcopy(DOMAIN_INTEL_DATA)


@pytest.fixture
def domain_intel(domain_intel_data: dict[str, Any]) -> Iterator[DomainIntelEmulator]:
    """A running Domain Intelligence emulator with :func:`domain_intel_data`."""
    with DomainIntelEmulator(domain_intel_data) as emu:
        yield emu
    assert emu.errors == []


def _validator(spec: dict[str, Any], schema_name: str) -> OAS30Validator:
    # The $ref is resolved against a root document that carries the spec's components.
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": spec["components"]}
    return OAS30Validator(schema, format_checker=oas30_format_checker)


Validate = Callable[..., None]


@pytest.fixture
def validate() -> Validate:
    """``validate(spec_file, schema_name, instance, nullable_properties=False)``.

    ``nullable_properties`` marks SimplePublicObject property values nullable: HubSpot
    returns ``null`` for a requested property without a value (documented), while its spec
    types them as plain strings.
    """

    def _validate(
        spec_file: str, schema_name: str, instance: Any, *, nullable_properties: bool = False
    ) -> None:
        spec = load_spec(spec_file)
        if nullable_properties:
            spec = copy.deepcopy(spec)
            props = spec["components"]["schemas"]["SimplePublicObject"]["properties"]
            props["properties"]["additionalProperties"]["nullable"] = True
        _validator(spec, schema_name).validate(instance)

    return _validate


@pytest.fixture
def schema_errors() -> Callable[[str, str, Any], list[str]]:
    """``schema_errors(spec_file, schema_name, instance)``: messages, empty when valid."""

    def _errors(spec_file: str, schema_name: str, instance: Any) -> list[str]:
        validator = _validator(load_spec(spec_file), schema_name)
        return [e.message for e in validator.iter_errors(instance)]

    return _errors


@pytest.fixture
def fake_clock() -> FakeClock:
    """A hand-advanced monotonic clock for the rate-limit window."""
    return FakeClock()


class FakeClock:
    """A monotonic clock the test advances by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# --- Meta Graph -----------------------------------------------------------------------------


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    """Our webhook endpoint, independent of the emulator, on a free loopback port."""
    found, server = start_receiver()
    yield found
    server.shutdown()
    server.server_close()


@pytest.fixture
def date_clock() -> DateClock:
    """The Meta emulator's clock, advanced by hand."""
    return DateClock()


@pytest.fixture
def make_meta(
    receiver: WebhookReceiver, date_clock: DateClock
) -> Iterator[Callable[..., MetaGraphEmulator]]:
    """``make_meta(**kwargs)``: a started Meta emulator with the test token, secret, receiver
    URL and clock (each overridable), stopped after the test."""

    def build(data: dict[str, Any] | None = None, **kwargs: Any) -> MetaGraphEmulator:
        options = {
            "token": META_TOKEN,
            "app_secret": META_APP_SECRET,
            "webhook_url": receiver.url,
            "now": date_clock,
        } | kwargs
        return MetaGraphEmulator(data, **options)

    yield from _started(build)


@pytest.fixture
def meta(make_meta: Callable[..., MetaGraphEmulator]) -> MetaGraphEmulator:
    """A running Meta emulator: token ``META_TOKEN``, webhooks to ``receiver``."""
    return make_meta()


@pytest.fixture
def meta_session() -> Iterator[requests.Session]:
    """A session sending the right bearer token."""
    yield from _bearer_session(META_TOKEN)
