"""Fixtures of the intake tests: the service over real HTTP on the real warehouse."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.intake import Tenant, intake_settings, serving


@pytest.fixture
def tenant(database_url: str) -> Tenant:
    return Tenant(database_url)


@pytest.fixture
def service(database_url: str) -> Iterator[tuple[str, Any]]:
    with serving(intake_settings(database_url)) as running:
        yield running
