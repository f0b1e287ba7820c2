"""The timeline's rules in plain Python: the WhatsApp window, what counts as engagement, and
the same lead history under a timer and under the evidence rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from morpheus_pipelines.crm.rules.timeline import (
    ENGAGEMENT_SYNC_MAX_AGE,
    InvalidActivity,
    NudgeRule,
    Touch,
    check_occurred_at,
    describe_rule,
    engagement_sync_missing,
    nudge_due_at,
    outside_whatsapp_window,
    replay_evidence_rule,
    replay_timer_rule,
    whatsapp_window,
)

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def test_the_window_is_24_hours_from_the_last_inbound_message() -> None:
    assert not whatsapp_window(None, T0).open
    window = whatsapp_window(at(0), at(23.5))
    assert window.open and window.remaining_seconds == 1800
    assert window.closes_at == at(24)
    closed = whatsapp_window(at(0), at(24))
    assert not closed.open and closed.remaining_seconds == 0 and closed.opened_at == at(0)


def test_occurred_at_needs_a_timezone_and_cannot_be_in_the_future() -> None:
    with pytest.raises(InvalidActivity, match="timezone"):
        check_occurred_at(datetime(2026, 11, 2, 9, 0), T0)
    with pytest.raises(InvalidActivity, match="future"):
        check_occurred_at(at(1), T0)
    with pytest.raises(InvalidActivity, match="out of range"):
        check_occurred_at(datetime.fromisoformat("0001-01-01T00:00:00+05:00"), T0)
    assert check_occurred_at(T0 + timedelta(minutes=4), T0) == T0 + timedelta(minutes=4)
    eight = datetime.fromisoformat("2026-11-02T17:00:00+08:00")
    assert check_occurred_at(eight, T0) == T0  # stored in UTC


@pytest.mark.parametrize(
    ("touch", "engaged"),
    [
        (Touch(T0, "email", "inbound"), True),
        (Touch(T0, "whatsapp", "inbound"), True),
        (Touch(T0, "call", "outbound"), True),  # a rep called
        (Touch(T0, "call", "outbound", by_ai_dialer=True), False),
        (Touch(T0, "email", "outbound"), False),
        (Touch(T0, "whatsapp", "outbound"), False),
    ],
)
def test_what_counts_as_engagement(touch: Touch, engaged: bool) -> None:
    assert touch.is_engagement is engaged


def test_a_whatsapp_rule_that_cannot_fire_inside_the_window_is_refused() -> None:
    with pytest.raises(InvalidActivity, match="fit in the 24-hour window"):
        NudgeRule("whatsapp", timedelta(hours=23), timedelta(hours=2))
    with pytest.raises(InvalidActivity, match="window_lead"):
        NudgeRule("email", timedelta(hours=23), timedelta(hours=2))
    with pytest.raises(InvalidActivity, match="window_lead"):
        NudgeRule("whatsapp", timedelta(hours=2))
    assert "never outside the window" in describe_rule(
        NudgeRule("whatsapp", timedelta(hours=12), timedelta(hours=2))
    )
    assert "2 h before the 24-hour window closes" in describe_rule(
        NudgeRule("whatsapp", timedelta(hours=12), timedelta(hours=2))
    )


def test_only_a_free_form_whatsapp_rule_is_bound_to_the_window() -> None:
    template = NudgeRule("whatsapp", timedelta(hours=12), kind="template")
    leading = NudgeRule("whatsapp", timedelta(hours=12), timedelta(hours=2), kind="template")
    free_form = NudgeRule("whatsapp", timedelta(hours=12), timedelta(hours=2))
    # A lead who never wrote on WhatsApp: no window, yet a template may go.
    assert nudge_due_at(template, at(0), None) == at(12)
    assert nudge_due_at(leading, at(0), None) == at(12)
    assert nudge_due_at(free_form, at(0), None) is None
    # Quiet since 14 h, window closed at 25 h: the free-form nudge never goes, templates do.
    assert nudge_due_at(leading, at(14), at(1)) == at(26)
    assert nudge_due_at(free_form, at(14), at(1)) is None
    assert "outside the window" in describe_rule(leading)
    with pytest.raises(InvalidActivity, match="free_form message or a template"):
        NudgeRule("whatsapp", timedelta(hours=12), kind="shout")


# A lead who filled the form, was called by a rep two hours later, answered on WhatsApp after
# five hours, then went quiet.
HISTORY = [
    Touch(at(0), "form", "inbound"),
    Touch(at(2), "call", "outbound"),
    Touch(at(5), "whatsapp", "inbound"),
]


def test_the_same_history_under_a_timer_and_under_the_evidence_rule() -> None:
    until = at(96)
    # "No email reply in 24 h → email nudge": the timer sees neither the call nor the
    # WhatsApp answer, and keeps going every day.
    timer_email = replay_timer_rule("email", timedelta(hours=24), at(0), HISTORY, until)
    evidence_email = replay_evidence_rule(
        NudgeRule("email", timedelta(hours=24)), at(0), HISTORY, until
    )
    assert timer_email == [at(24), at(48), at(72), at(96)]
    assert evidence_email == [at(29)]  # 24 h after the WhatsApp answer, once

    # "WhatsApp follow-up in 48 h": the timer fires after the window closed (at 29 h) and the
    # message would be refused; the evidence rule goes 2 h before the window closes.
    timer_whatsapp = replay_timer_rule("whatsapp", timedelta(hours=48), at(0), HISTORY, until)
    evidence_whatsapp = replay_evidence_rule(
        NudgeRule("whatsapp", timedelta(hours=12), timedelta(hours=2)), at(0), HISTORY, until
    )
    assert timer_whatsapp == [at(53)]  # 48 h after the last WhatsApp reply
    assert all(outside_whatsapp_window(moment, HISTORY) for moment in timer_whatsapp)
    assert evidence_whatsapp == [at(27)]
    assert not any(outside_whatsapp_window(moment, HISTORY) for moment in evidence_whatsapp)


touches = st.lists(
    st.builds(
        Touch,
        occurred_at=st.integers(min_value=0, max_value=96 * 60).map(
            lambda minutes: T0 + timedelta(minutes=minutes)
        ),
        channel=st.sampled_from(["form", "whatsapp", "call", "email"]),
        direction=st.sampled_from(["inbound", "outbound"]),
        by_ai_dialer=st.booleans(),
    ),
    max_size=12,
)


@given(history=touches, lead_hours=st.integers(min_value=1, max_value=6))
def test_evidence_whatsapp_nudges_are_always_inside_the_window(history, lead_hours) -> None:
    rule = NudgeRule("whatsapp", timedelta(hours=6), timedelta(hours=lead_hours))
    full = [Touch(T0, "form", "inbound"), *history]
    for moment in replay_evidence_rule(rule, T0, full, at(120)):
        assert not outside_whatsapp_window(moment, full)


@given(history=touches)
def test_evidence_nudges_come_only_after_a_full_quiet_period(history) -> None:
    rule = NudgeRule("email", timedelta(hours=12))
    full = [Touch(T0, "form", "inbound"), *history]
    sent = replay_evidence_rule(rule, T0, full, at(120))
    for moment in sent:
        engaged = [t.occurred_at for t in full if t.is_engagement and t.occurred_at <= moment]
        assert moment - max(engaged) >= timedelta(hours=12)
    assert len(sent) == len(set(sent))


def test_nudge_due_at_without_a_window_is_none_for_whatsapp() -> None:
    rule = NudgeRule("whatsapp", timedelta(hours=12), timedelta(hours=2))
    assert nudge_due_at(rule, at(0), None) is None
    assert nudge_due_at(rule, at(0), at(0)) == at(22)
    assert nudge_due_at(rule, at(20), at(0)) is None  # would fall after the close


def test_an_engagement_at_the_instant_a_nudge_falls_due_wins() -> None:
    rule = NudgeRule("email", timedelta(hours=12))
    history = [Touch(at(0), "form", "inbound"), Touch(at(12), "email", "inbound")]
    assert replay_evidence_rule(rule, at(0), history, at(20)) == []
    assert replay_evidence_rule(rule, at(0), history, at(12)) == []  # evaluated at that instant
    assert replay_evidence_rule(rule, at(0), history, at(24)) == [at(24)]


def test_silence_is_judged_only_while_the_engagement_sync_is_recent() -> None:
    assert "never run" in engagement_sync_missing(None, T0)
    assert engagement_sync_missing(T0, T0) is None
    assert engagement_sync_missing(T0, T0 + ENGAGEMENT_SYNC_MAX_AGE) is None
    assert engagement_sync_missing(T0 + timedelta(minutes=3), T0) is None  # clocks drift
    late = engagement_sync_missing(T0, T0 + ENGAGEMENT_SYNC_MAX_AGE + timedelta(seconds=1))
    assert late is not None and "last ran 1.0 h ago (more than 1 h)" in late
    assert "last ran 26.0 h ago" in engagement_sync_missing(T0, at(26))
