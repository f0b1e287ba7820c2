"""``MORPHEUS_LEAD_STALE_DAYS``: its default, "never", and a value refused naming the
variable."""

from __future__ import annotations

import pytest

from morpheus_pipelines.platform.settings import load_settings


def test_the_default_is_thirty_days_and_zero_means_never() -> None:
    assert load_settings({}).lead_stale_days == 30
    assert load_settings({"MORPHEUS_LEAD_STALE_DAYS": "0"}).lead_stale_days == 0
    assert load_settings({"MORPHEUS_LEAD_STALE_DAYS": "14"}).lead_stale_days == 14


@pytest.mark.parametrize("value", ["-1", "soon", "1.5"])
def test_a_bad_value_is_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match="MORPHEUS_LEAD_STALE_DAYS"):
        load_settings({"MORPHEUS_LEAD_STALE_DAYS": value})
