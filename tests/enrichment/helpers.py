"""Helpers shared by the enrichment tests."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd

from morpheus_pipelines.devtools.emulators import DomainIntelEmulator

# What the emulator knows: two tenants by id, one company by email domain.
KNOWN_TENANTS: dict[str, dict[str, Any]] = {
    "t-1": {
        "official_website": "https://www.lioncity.com.sg",
        "company_name": "Lion City Pte Ltd",
        "industry": "Logistics",
        "employee_count": 120,
        "country": "SG",
    },
    "t-2": {"official_website": "https://harbour.com.au", "country": "AU"},
}
KNOWN_DOMAINS: dict[str, dict[str, Any]] = {
    "sakura.co.jp": {"company_name": "Sakura KK", "country": "JP", "employee_count": 45},
}


def candidates(count: int, *, prefix: str = "c", domain: str = "acme{i}.com.au") -> pd.DataFrame:
    """``count`` well-formed candidates the emulator does not know."""
    return pd.DataFrame(
        {
            "tenant_id": [f"{prefix}-{i}" for i in range(count)],
            "name": [f"Company {i}" for i in range(count)],
            "email": [f"owner{i}@{domain.format(i=i)}" for i in range(count)],
        }
    )


def sent_batches(emu: DomainIntelEmulator) -> list[list[dict[str, Any]]]:
    """The ``inputs`` of every enrich request the emulator received, in arrival order."""
    return [record.body["inputs"] for record in emu.log.entries("enrich")]


def sent_ids(emu: DomainIntelEmulator) -> list[list[str]]:
    """The tenant ids of every enrich request, in arrival order."""
    return [[item["tenant_id"] for item in batch] for batch in sent_batches(emu)]


class ListHandler(logging.Handler):
    """Collects the messages of a plain logger (stands in for Dagster's ``context.log``)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.messages: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append((record.levelno, record.getMessage()))
