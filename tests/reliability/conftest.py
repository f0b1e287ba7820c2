"""Fixtures for the reliability suite: emulators serving the generated data of
:mod:`tests.support.reliability`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator, HubSpotEmulator
from tests.support.reliability import domain_intel_data, hubspot_data


@pytest.fixture
def hubspot_emulator() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator(hubspot_data()) as emu:
        yield emu


@pytest.fixture
def domain_intel() -> Iterator[DomainIntelEmulator]:
    with DomainIntelEmulator(domain_intel_data()) as emu:
        yield emu
