"""Fixtures of the ownership tests: the real warehouse and the HubSpot emulator over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from tests.support.ownership import World, portal


@pytest.fixture
def hubspot() -> Iterator[HubSpotEmulator]:
    with portal() as emulator:
        yield emulator
    assert emulator.errors == []


@pytest.fixture
def world(database_url: str, hubspot: HubSpotEmulator) -> World:
    return World(database_url, hubspot)
