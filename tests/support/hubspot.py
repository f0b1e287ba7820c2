"""Helpers shared by the HubSpot snapshot tests."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import text

from morpheus_pipelines.db.session import get_session

TOKEN = "pat-na1-11111111-2222-3333-4444-SECRETTOKEN"
LIST_ID = "19544"


def companies(count: int, *, start: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "id": str(9000 + i),
            "name": f"Target {i}",
            "domain": f"target{i}.com.au",
            "website": f"https://www.target{i}.com.au/about",
            "hs_additional_domains": f"target{i}.co.jp; ;TARGET{i}.co.kr",
            "portal_id__c": f" P{i} ",
            "account_id__c": f"A{i}",
            "account_allias__c": f"T{i}",
            "hs_lastmodifieddate": "2026-11-01T00:00:00.000Z",
        }
        for i in range(start, start + count)
    ]


class RecordingSleep:
    """Stands in for time.sleep and the clock in a client: records each wait and advances a
    virtual clock by it, so a rate budget "waits" without the test sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.offset = 0.0

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.offset += seconds

    def clock(self) -> float:
        return time.monotonic() + self.offset


def snapshot_hash(database_url: str) -> str:
    """A hash of the whole snapshot table, row for row."""
    with get_session(database_url) as session:
        return session.execute(
            text(
                "SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY hubspot_company_id), ''))"
                " FROM apac_hubspot_target_accounts t"
            )
        ).scalar_one()
