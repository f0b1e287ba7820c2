"""A property-based fuzzer (schemathesis) against the live service, driven by the service's
own ``/openapi.json``: no 5xx, and every answer conforms to the document (docs/leads.md)."""

from __future__ import annotations

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.intake import Tenant

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
OPERATIONS = [
    ("/v1/leads", "POST"),
    ("/v1/leads", "GET"),
    ("/v1/leads/{lead_id}", "GET"),
    ("/v1/leads/{lead_id}", "PATCH"),
    ("/v1/activities", "POST"),
    ("/v1/leads/{lead_id}/timeline", "GET"),
    ("/v1/leads/{lead_id}/whatsapp-window", "GET"),
    ("/v1/messages", "POST"),
    ("/healthz", "GET"),
]


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
def test_the_live_service_keeps_its_document(
    tenant: Tenant, service, path: str, method: str
) -> None:
    base, _ = service
    tenant.add_rep("ana@acme.test", "101")
    schema = schemathesis.openapi.from_dict(requests.get(f"{base}/openapi.json", timeout=5).json())
    headers = {"Authorization": f"Bearer {tenant.key}"}

    @given(case=schema[path][method].as_strategy())
    @settings(
        max_examples=80,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    def exchange(case) -> None:
        case.call_and_validate(base_url=base, headers=headers, checks=CHECKS)

    exchange()
