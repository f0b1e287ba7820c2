"""Helpers the tests import (conftest files hold only fixtures and hooks)."""

import pytest

# Modules whose helpers came out of conftest files, where pytest rewrote their asserts: keep
# the detailed assertion messages. Must run before the modules are imported.
pytest.register_assert_rewrite("tests.support.reliability", "tests.support.reports")
