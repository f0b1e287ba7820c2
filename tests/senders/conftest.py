"""Fixtures of the sender tests: the intake service over real HTTP, with the secrets Meta's
webhooks are signed and verified with."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.intake import Tenant, intake_settings, serving

META_APP_SECRET = "meta-app-secret-for-tests"
META_VERIFY_TOKEN = "verify-token-for-tests"


@pytest.fixture
def tenant(database_url: str) -> Tenant:
    return Tenant(database_url)


@pytest.fixture
def service(database_url: str) -> Iterator[tuple[str, Any]]:
    settings = intake_settings(
        database_url, meta_app_secret=META_APP_SECRET, meta_verify_token=META_VERIFY_TOKEN
    )
    with serving(settings) as running:
        yield running
