"""Data for the tenant pipeline tests: the partition they run and the target companies; what
a prepared snapshot answers, to compare two."""

from __future__ import annotations

from morpheus_pipelines.tenants.rules.matching import KeyLookup, SnapshotIndex

PARTITION = "2026-11-29"

# Target companies the tests match against.
COMPANIES = [
    {"id": "501", "name": "Portal Co", "portal_id__c": "t-portal", "domain": "portalco.com.au"},
    {"id": "502", "name": "Account Co", "account_id__c": "CUST-9", "domain": "accountco.co.jp"},
    {
        "id": "503",
        "name": "Email Co",
        "domain": "emailco.com.cn",
        "hs_additional_domains": "emailco.cn;;emailco-group.com",
    },
    {"id": "504", "name": "Website Co", "website": "https://www.websiteco.co.kr/en"},
    {"id": "505", "name": "Shared A", "domain": "shared.com.sg"},
    {"id": "506", "name": "Shared B", "website": "http://shared.com.sg"},
    {"id": "507", "name": "Free Mail Co", "domain": "gmail.com"},
    {"id": "508", "name": "IDN Co", "domain": "例え.jp"},
]


def lookups(index: SnapshotIndex) -> dict[str, tuple[dict[str, str], frozenset[str]]]:
    """Each look-up of a prepared snapshot: its owned keys and its ambiguous ones."""
    return {
        name: (dict(lookup.owners), lookup.ambiguous_keys)
        for name, lookup in vars(index).items()
        if isinstance(lookup, KeyLookup)
    }
