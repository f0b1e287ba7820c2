"""Fixtures for the enrichment tests: a Domain Intelligence emulator over real HTTP."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator
from morpheus_pipelines.platform.clients.domain_intelligence import DomainIntelligenceClient
from tests.enrichment.helpers import KNOWN_DOMAINS, KNOWN_TENANTS, ListHandler
from tests.support.hubspot import RecordingSleep

_loggers = itertools.count()


@pytest.fixture
def emulator() -> Iterator[DomainIntelEmulator]:
    """A running emulator knowing t-1, t-2 and the domain sakura.co.jp."""
    with DomainIntelEmulator({"tenants": KNOWN_TENANTS, "domains": KNOWN_DOMAINS}) as emu:
        yield emu
    assert emu.errors == []


@pytest.fixture
def make_client(
    emulator: DomainIntelEmulator, sleeps: RecordingSleep
) -> Iterator[Callable[..., DomainIntelligenceClient]]:
    """``make_client(**overrides)``: short timeouts, no real sleeping, closed after the test."""
    made: list[DomainIntelligenceClient] = []

    def _make(**overrides: Any) -> DomainIntelligenceClient:
        options: dict[str, Any] = {
            "read_timeout": 2.0,
            "connect_timeout": 2.0,
            "retry_count": 3,
            "requests_per_10s": 1000,
            "sleep": sleeps,
        }
        options.update(overrides)
        client = DomainIntelligenceClient(emulator.base_url, **options)
        made.append(client)
        return client

    yield _make
    for client in made:
        client.close()


@pytest.fixture
def run_log() -> Iterator[tuple[logging.Logger, ListHandler]]:
    """A fresh logger (the ``log`` argument) and the handler recording its messages."""
    logger = logging.getLogger(f"tests.enrichment.run.{next(_loggers)}")
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    handler = ListHandler()
    logger.addHandler(handler)
    yield logger, handler
    logger.removeHandler(handler)
