"""Loopback HTTP emulators of HubSpot, the Domain Intelligence service and the Meta Graph API
(Lead Ads, WhatsApp Cloud API).

Used by the test suite, ``morpheus demo`` and ``morpheus emulate``.
Standard library only: no Dagster import, so they can run in any process.
"""

from ._faults import Fault, FaultKind
from ._request_log import RequestLog, RequestRecord
from .domain_intel import DomainIntelEmulator
from .hubspot import RATE_LIMIT_POLICIES, HubSpotEmulator
from .hubspot import build_data as build_hubspot_data
from .meta_graph import MetaGraphEmulator

__all__ = [
    "RATE_LIMIT_POLICIES",
    "DomainIntelEmulator",
    "Fault",
    "FaultKind",
    "HubSpotEmulator",
    "MetaGraphEmulator",
    "RequestLog",
    "RequestRecord",
    "build_hubspot_data",
]
