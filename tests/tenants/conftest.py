"""Fixtures for the tenant pipeline tests: emulators over HTTP and a pipeline runner."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from morpheus_pipelines.devtools.emulators import (
    DomainIntelEmulator,
    HubSpotEmulator,
    build_hubspot_data,
)
from tests.support.hubspot import TOKEN
from tests.support.incremental import Warehouse
from tests.support.pipeline import Pipeline
from tests.support.tenants import COMPANIES


@pytest.fixture
def hubspot_emulator() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator(build_hubspot_data(COMPANIES, token=TOKEN)) as emu:
        yield emu


@pytest.fixture
def domain_intel() -> Iterator[DomainIntelEmulator]:
    data = {
        "tenants": {
            "t-website": {"official_website": "https://WWW.websiteco.co.kr", "country": "KR"},
            "t-shared-site": {"official_website": "shared.com.sg"},
        }
    }
    with DomainIntelEmulator(data) as emu:
        yield emu


@pytest.fixture
def pipeline(
    database_url: str,
    hubspot_emulator: HubSpotEmulator,
    domain_intel: DomainIntelEmulator,
    tmp_path: Path,
) -> Pipeline:
    return Pipeline(
        database_url=database_url,
        hubspot_url=hubspot_emulator.base_url,
        hubspot_token=TOKEN,
        domain_intel_url=domain_intel.base_url,
        sales_emails=" Alice.Sales@Morpheus.example , bob@morpheus.example",
        forced_ids="t-forced-1,t-forced-2,t-forced-3",
        home=str(tmp_path),
    )


@pytest.fixture
def warehouses(database_factory) -> Callable[[], tuple[Warehouse, Warehouse]]:
    """Two empty warehouses, one routing and scoring incrementally, one recomputing
    everything; calling the fixture empties them again (one call per hypothesis example)."""
    incremental = Warehouse(database_factory(), incremental=True)
    full = Warehouse(database_factory(), incremental=False)

    def fresh() -> tuple[Warehouse, Warehouse]:
        incremental.reset()
        full.reset()
        return incremental, full

    return fresh
