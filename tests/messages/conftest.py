"""Fixtures of the sending tests: the warehouse, a real SMTP server, a clock the test moves."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tests.support.intake import Clock
from tests.support.messages import Messaging, SmtpTestServer


@pytest.fixture
def messaging(database_url: str) -> Messaging:
    return Messaging(database_url)


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def smtp_server() -> Iterator[SmtpTestServer]:
    server = SmtpTestServer()
    server.start()
    yield server
    server.stop()
