"""The five attribution models on hand-checked touch sequences, and the properties every
model keeps (each win's credit sums to one, nothing negative)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from morpheus_pipelines.crm.rules.attribution import (
    MODELS,
    AttributedTouch,
    WonLead,
    attribute,
    credit,
)

WON = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BY_NAME = {model.name: model for model in MODELS}


def touch(days_before: float, channel: str = "email", owner: str = "rep") -> AttributedTouch:
    return AttributedTouch(WON - timedelta(days=days_before), channel, owner)


FOUR = [touch(21, "form"), touch(14, "whatsapp"), touch(7, "call"), touch(0, "email")]


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("first_touch", [1, 0, 0, 0]),
        ("last_touch", [0, 0, 0, 1]),
        ("linear", [0.25, 0.25, 0.25, 0.25]),
        ("position_based", [0.4, 0.1, 0.1, 0.4]),
        ("time_decay", [1 / 15, 2 / 15, 4 / 15, 8 / 15]),  # halves every 7 days
    ],
)
def test_each_model_splits_four_touches_as_it_says(model: str, expected: list[float]) -> None:
    assert credit(FOUR, WON, BY_NAME[model]) == pytest.approx(expected)


def test_position_based_shares_one_or_two_touches_equally() -> None:
    assert credit([touch(3)], WON, BY_NAME["position_based"]) == [1.0]
    assert credit([touch(3), touch(1)], WON, BY_NAME["position_based"]) == [0.5, 0.5]


def test_every_model_has_a_one_line_explanation() -> None:
    for model in MODELS:
        assert model.explanation and "\n" not in model.explanation


def test_the_report_sums_per_channel_and_owner_and_names_the_widest_disagreement() -> None:
    leads = [
        WonLead("a", WON, FOUR),
        WonLead("b", WON, [touch(2, "whatsapp", "ai"), touch(1, "call", "rep")]),
        WonLead("c", WON, []),
    ]
    result = attribute(leads)

    assert result.won_leads == 3 and result.leads_without_touches == 1
    for name in BY_NAME:
        assert sum(per[name] for per in result.by_channel.values()) == pytest.approx(2.0)
        assert sum(per[name] for per in result.by_owner.values()) == pytest.approx(2.0)
    assert result.by_channel["form"]["first_touch"] == pytest.approx(1.0)
    assert result.by_channel["form"]["last_touch"] == 0
    _channel, spread, most, least = result.disagreements("channel", top=1)[0]
    assert spread == pytest.approx(1.0) and most != least


@given(st.lists(st.floats(min_value=0, max_value=365, allow_nan=False), min_size=1, max_size=30))
def test_every_model_gives_each_win_exactly_one_credit(days: list[float]) -> None:
    touches = [touch(d) for d in days]
    for model in MODELS:
        shares = credit(touches, WON, model)
        assert sum(shares) == pytest.approx(1.0)
        assert all(share >= 0 for share in shares)


def test_time_decay_survives_touches_decades_before_the_win() -> None:
    ancient = [touch(365 * 40), touch(365 * 39)]
    shares = credit(ancient, WON, BY_NAME["time_decay"])
    assert sum(shares) == pytest.approx(1.0) and shares[1] > shares[0]
