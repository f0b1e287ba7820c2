"""Fixtures for the reliability suite: emulators and a larger generated tenant set."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from morpheus_pipelines.emulators import HubSpotEmulator, build_hubspot_data
from tests.support.hubspot import TOKEN
from tests.support.pipeline import tenant

PARTITION = "2026-11-29"
SALES = "alice.sales@morpheus.example"


def companies(count: int = 200) -> list[dict]:
    return [
        {
            "id": str(7000 + i),
            "name": f"Target {i}",
            "domain": f"target{i}.com.au",
            "portal_id__c": f"t{i:05d}" if i % 3 == 0 else None,
        }
        for i in range(count)
    ]


def tenants(count: int, *, sales_every: int = 0) -> list[dict]:
    """``count`` tenants; every 10th a target by email domain; every ``sales_every``-th
    owned by APAC Sales."""
    rows = []
    for i in range(count):
        email = f"ops@target{i % 200}.com.au" if i % 10 == 0 else f"u{i}@corp{i}.co.jp"
        owner = SALES if sales_every and i % sales_every == 1 else None
        rows.append(tenant(f"t{i:05d}", email=email, sales_owner_email=owner))
    return rows


@pytest.fixture
def hubspot_emulator() -> Iterator[HubSpotEmulator]:
    with HubSpotEmulator(build_hubspot_data(companies(), token=TOKEN)) as emu:
        yield emu
