"""Fixtures for the snapshot tests: a HubSpot emulator over HTTP and the real warehouse."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
from sqlalchemy.orm import Session

from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator, build_hubspot_data
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient
from tests.support.hubspot import LIST_ID, TOKEN, RecordingSleep, companies


@pytest.fixture
def emulator() -> Iterator[HubSpotEmulator]:
    """260 target companies: two membership pages, three batch reads."""
    with HubSpotEmulator(build_hubspot_data(companies(260), list_id=LIST_ID, token=TOKEN)) as emu:
        yield emu
    assert emu.errors == []


@pytest.fixture
def make_client(emulator: HubSpotEmulator, sleeps: RecordingSleep) -> Callable[..., HubSpotClient]:
    def _make(**overrides: Any) -> HubSpotClient:
        options: dict[str, Any] = {
            "read_timeout": 2.0,
            "connect_timeout": 2.0,
            "retry_count": 3,
            "requests_per_10s": 1000,
            "sleep": sleeps,
            "clock": sleeps.clock,
        }
        options.update(overrides)
        return HubSpotClient(emulator.base_url, options.pop("token", TOKEN), **options)

    return _make


@pytest.fixture
def sessions(database_url: str) -> Callable[[], AbstractContextManager[Session]]:
    return lambda: get_session(database_url)
