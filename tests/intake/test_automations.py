"""Automations on evidence, evaluated by one statement over the real timeline: each nudge
fires once per quiet period, never at a lead who replied on any channel or whom a rep called,
and a WhatsApp nudge only inside the window, exactly when the plain-Python rule says."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, text

from morpheus_pipelines.crm.models import AutomationFiring, OutboundMessage
from morpheus_pipelines.crm.repositories.timeline import (
    EVALUATION_STATEMENT as EVALUATE,
)
from morpheus_pipelines.crm.repositories.timeline import AutomationRepository
from morpheus_pipelines.crm.rules.timeline import NudgeRule, Touch, replay_evidence_rule
from morpheus_pipelines.crm.steps.lead_automations import fire_due_nudges
from morpheus_pipelines.db.session import get_session
from tests.support.timeline import lead_with_history, rule, subscription

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def hours(n: float) -> datetime:
    return T0 + timedelta(hours=n)


def session_factory(url: str):
    return lambda: get_session(url)


def run_every_half_hour(url: str, until_hours: float) -> dict[uuid.UUID, list[datetime]]:
    """The sensor's ticks, replayed: the due time of every firing, per lead."""
    fired: dict[uuid.UUID, list[datetime]] = {}
    for tick in range(int(until_hours * 2) + 1):
        evaluation = fire_due_nudges(session_factory(url), hours(tick / 2))
        for firing in evaluation.firings:
            fired.setdefault(firing.lead_id, []).append(firing.due_at)
    return fired


HISTORIES = {
    "silent": [],
    "replied_on_whatsapp": [Touch(hours(5), "whatsapp", "inbound")],
    "called_by_a_rep": [Touch(hours(20), "call", "outbound")],
    "called_by_the_ai_dialer": [Touch(hours(20), "call", "outbound", by_ai_dialer=True)],
    "emailed_by_us_only": [Touch(hours(2), "email", "outbound")],
    "keeps_replying": [Touch(hours(h), "email", "inbound") for h in (10, 30, 50)],
}


def test_email_nudges_follow_the_evidence_rule_exactly(database_url: str) -> None:
    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "quiet_day", "email", quiet_hours=24)
    leads = {
        name: lead_with_history(database_url, subscription_id, T0, history)
        for name, history in HISTORIES.items()
    }

    fired = run_every_half_hour(database_url, until_hours=72)

    evidence = NudgeRule("email", timedelta(hours=24))
    for name, history in HISTORIES.items():
        expected = replay_evidence_rule(
            evidence, T0, [Touch(T0, "form", "inbound"), *history], hours(72)
        )
        assert fired.get(leads[name], []) == expected, name
    # What that means for these leads:
    assert fired[leads["silent"]] == [hours(24)]  # once per quiet period, not every day
    assert fired[leads["replied_on_whatsapp"]] == [hours(29)]
    assert fired[leads["called_by_a_rep"]] == [hours(44)]
    assert fired[leads["called_by_the_ai_dialer"]] == [hours(24)]  # the AI is not evidence
    assert fired[leads["emailed_by_us_only"]] == [hours(24)]  # our own message is not either
    assert leads["keeps_replying"] not in fired


def test_a_whatsapp_nudge_goes_two_hours_before_the_window_closes_never_after(
    database_url: str,
) -> None:
    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "window_closing", "whatsapp", 12, window_lead_hours=2)
    wrote_once = lead_with_history(
        database_url, subscription_id, T0, [Touch(hours(1), "whatsapp", "inbound")]
    )
    never_wrote = lead_with_history(database_url, subscription_id, T0)
    engaged_elsewhere = lead_with_history(
        database_url,
        subscription_id,
        T0,
        [Touch(hours(1), "whatsapp", "inbound"), Touch(hours(14), "email", "inbound")],
    )

    fired = run_every_half_hour(database_url, until_hours=48)

    assert fired[wrote_once] == [hours(23)]  # 1 h + 24 h − 2 h, inside the window
    assert never_wrote not in fired  # no window, no free-form nudge
    # Quiet since 14 h, so due at 26 h: after the window closed at 25 h, so never.
    assert engaged_elsewhere not in fired
    with get_session(database_url) as session:
        queued = session.scalars(
            select(OutboundMessage).where(OutboundMessage.leadId == wrote_once)
        ).one()
        assert queued.createdAt < hours(25)
        assert (queued.kind, queued.body) == ("free_form", "window_closing body")


def test_a_whatsapp_template_nudge_is_not_held_back_by_the_window(database_url: str) -> None:
    """Only a free-form WhatsApp message is bound to the 24-hour window: an approved template
    goes on its quiet period, to a lead who never wrote and after the window closed."""
    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "template_nudge", "whatsapp", 12, kind="template")
    rule(
        database_url,
        subscription_id,
        "template_before_close",
        "whatsapp",
        12,
        window_lead_hours=2,
        kind="template",
    )
    never_wrote = lead_with_history(database_url, subscription_id, T0)
    engaged_elsewhere = lead_with_history(
        database_url,
        subscription_id,
        T0,
        [Touch(hours(1), "whatsapp", "inbound"), Touch(hours(14), "email", "inbound")],
    )

    fired = run_every_half_hour(database_url, until_hours=48)

    # No window at all: each rule fires on the quiet period.
    assert fired[never_wrote] == [hours(12), hours(12)]
    # The rule without a lead 12 h after the WhatsApp message; then quiet since 14 h: both
    # due at 26 h, after the window closed at 25 h, and a template still goes.
    assert fired[engaged_elsewhere] == [hours(13), hours(26), hours(26)]
    with get_session(database_url) as session:
        kinds = set(session.scalars(select(OutboundMessage.kind)))
    assert kinds == {"template"}


def test_a_lost_or_won_lead_is_not_nudged(database_url: str) -> None:
    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "quiet_day", "email", quiet_hours=24)
    won = lead_with_history(database_url, subscription_id, T0)
    with get_session(database_url) as session:
        session.execute(text("UPDATE leads SET status = 'won' WHERE id = :id"), {"id": won})

    assert run_every_half_hour(database_url, until_hours=30) == {}


def _firings(url: str) -> int:
    with get_session(url) as session:
        return session.scalar(select(func.count()).select_from(AutomationFiring))


def _overlapping_evaluations(url: str, now: datetime, statement: str) -> None:
    """Two evaluations at once: the second runs while the first has not committed."""

    def evaluate(session) -> None:
        session.execute(text(statement), {"now": now, "max_firings": 100})

    with get_session(url) as first:
        evaluate(first)

        def second_evaluation() -> None:
            with get_session(url) as second:
                evaluate(second)

        second = threading.Thread(target=second_evaluation, daemon=True)
        second.start()
        second.join(timeout=1.0)  # blocks on the first's uncommitted firings, or finishes
    second.join(timeout=30)
    assert not second.is_alive()


def _quiet_leads(url: str, n: int) -> None:
    subscription_id = subscription(url)
    rule(url, subscription_id, "quiet_day", "email", quiet_hours=24)
    for _ in range(n):
        lead_with_history(url, subscription_id, T0)


def test_overlapping_evaluations_fire_once(database_url: str) -> None:
    _quiet_leads(database_url, 5)

    _overlapping_evaluations(database_url, hours(25), EVALUATE)

    assert _firings(database_url) == 5


def test_without_the_unique_firing_constraint_overlapping_evaluations_fire_twice(
    database_url: str,
) -> None:
    _quiet_leads(database_url, 5)
    arbiter = 'ON CONFLICT ("ruleId", "leadId", "quietSince") DO NOTHING'
    assert arbiter in EVALUATE
    with get_session(database_url) as session:
        session.execute(
            text(
                "ALTER TABLE automation_firings "
                'DROP CONSTRAINT "uq_automation_firings_ruleId_leadId_quietSince"'
            )
        )

    # Only the read-then-write NOT EXISTS left: each evaluation sees no firing, both insert.
    _overlapping_evaluations(database_url, hours(25), EVALUATE.replace(arbiter, ""))

    assert _firings(database_url) == 10


def test_a_burst_is_bounded_and_deadlines_go_first(database_url: str) -> None:
    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "quiet_day", "email", quiet_hours=20)
    rule(database_url, subscription_id, "window_closing", "whatsapp", 12, window_lead_hours=2)
    for _ in range(3):
        lead_with_history(database_url, subscription_id, T0)
    on_whatsapp = lead_with_history(
        database_url, subscription_id, T0, [Touch(hours(0), "whatsapp", "inbound")]
    )
    repository = AutomationRepository()

    batches = []
    for _ in range(4):
        with get_session(database_url) as session:
            batches.append(repository.fire_due(session, now=hours(23), max_firings=2))

    assert [len(batch) for batch in batches] == [2, 2, 1, 0]  # 4 email + 1 WhatsApp nudge
    assert batches[0][0].lead_id == on_whatsapp  # the window closes at 24 h: first


def test_an_email_nudge_never_goes_to_an_opted_out_address(database_url: str) -> None:
    from morpheus_pipelines.crm.repositories.target_emails import TargetEmailsRepository

    subscription_id = subscription(database_url)
    rule(database_url, subscription_id, "quiet_day", "email", quiet_hours=24)
    opted_out = lead_with_history(database_url, subscription_id, T0, email="Gone@Buyer.example")
    reachable = lead_with_history(database_url, subscription_id, T0, email="here@buyer.example")
    with get_session(database_url) as session:  # as HubSpot's webhook records it
        TargetEmailsRepository().set_newsletter_opt_out(
            session,
            subscription_id=subscription_id,
            email="gone@buyer.example",
            opted_out=True,
            occurred_at=hours(1),
        )

    fired = run_every_half_hour(database_url, until_hours=30)

    assert opted_out not in fired
    assert fired[reachable] == [hours(24)]
