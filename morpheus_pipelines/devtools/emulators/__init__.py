"""Loopback HTTP emulators of HubSpot and the Domain Intelligence service.

Used by the test suite, ``morpheus demo`` and ``morpheus emulate``.
Standard library only: no Dagster import, so they can run in any process.
"""

from ._faults import Fault, FaultKind
from ._request_log import RequestLog, RequestRecord
from .domain_intel import DomainIntelEmulator
from .hubspot import RATE_LIMIT_POLICIES, HubSpotEmulator
from .hubspot import build_data as build_hubspot_data

__all__ = [
    "RATE_LIMIT_POLICIES",
    "DomainIntelEmulator",
    "Fault",
    "FaultKind",
    "HubSpotEmulator",
    "RequestLog",
    "RequestRecord",
    "build_hubspot_data",
]
