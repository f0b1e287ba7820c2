"""Emulator data built from flat company dicts, and the sample portal of ``morpheus emulate``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from morpheus_pipelines.platform.settings import DEFAULT_TARGET_LIST_ID

from .._messages import iso_now
from .portal import morpheus_property_data


def build_data(
    companies: Iterable[Mapping[str, Any]],
    *,
    list_id: str | int = DEFAULT_TARGET_LIST_ID,
    list_name: str = "APAC Target Accounts",
    token: str | None = None,
    members: Iterable[Any] | None = None,
    owners: Iterable[Mapping[str, Any]] = (),
    processing_status: str = "COMPLETE",
    membership_timestamp: str | None = None,
) -> dict[str, Any]:
    """Emulator data from flat company dicts.

    Each company needs ``id`` (or ``hs_object_id``); ``createdAt``, ``updatedAt``,
    ``archived`` and a nested ``properties`` dict are honoured, every other key is a property.
    All companies are list members unless ``members`` (ids) is given.
    """
    ts = membership_timestamp or iso_now()
    out_companies: dict[str, Any] = {}
    for raw in companies:
        company_id = str(raw.get("id") or raw.get("hs_object_id") or "")
        if not company_id:
            raise ValueError(f"company without id: {raw!r}")
        special = {"id", "properties", "createdAt", "updatedAt", "archived"}
        props = {k: v for k, v in raw.items() if k not in special}
        props.update(raw.get("properties") or {})
        entry: dict[str, Any] = {"properties": props}
        for key in ("createdAt", "updatedAt", "archived"):
            if key in raw:
                entry[key] = raw[key]
        out_companies[company_id] = entry
    member_ids = list(out_companies) if members is None else [str(m) for m in members]
    return {
        "token": token,
        "lists": {
            str(list_id): {
                "name": list_name,
                "processingStatus": processing_status,
                "members": [{"id": m, "membershipTimestamp": ts} for m in member_ids],
            }
        },
        "companies": out_companies,
        "owners": [dict(o) for o in owners],
    }


def sample_data(token: str | None = None) -> dict[str, Any]:
    """A tiny APAC portal for ``morpheus emulate hubspot`` without ``--data``; Morpheus's
    unique key properties already exist in it."""
    data = build_data(
        [
            {
                "id": "9001",
                "name": "Lion City Logistics",
                "domain": "lioncitylogistics.com.sg",
                "website": "https://www.lioncitylogistics.com.sg",
                "hs_additional_domains": "lcl.sg",
                "portal_id__c": "100001",
                "account_id__c": "ACC-SG-001",
                "account_allias__c": "LCL",
            },
            {
                "id": "9002",
                "name": "Harbour Bridge Analytics",
                "domain": "harbourbridge.com.au",
                "website": "harbourbridge.com.au",
                "portal_id__c": None,
                "account_id__c": "ACC-AU-002",
            },
            {
                "id": "9003",
                "name": "Sakura Devices",
                "domain": None,
                "website": "https://sakura-devices.co.jp/",
            },
        ],
        token=token,
        owners=[
            {"id": "501", "email": "apac.sales@example.com", "firstName": "Mei", "userId": 7001}
        ],
    )
    return data | {"properties": morpheus_property_data()}
