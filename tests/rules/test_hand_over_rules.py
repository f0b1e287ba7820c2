"""The hand-over's pure rules: the tally by rung, the moves added chunk by chunk, the intents
and the lines the Daily Summary shows."""

from __future__ import annotations

from datetime import UTC, datetime

from morpheus_pipelines.crm.reports.rep_hand_overs import hand_over_note
from morpheus_pipelines.crm.rules.hand_over import (
    HandOverLine,
    HandOverTally,
    hand_over_intent,
    hand_over_lines,
    merged_moves,
)
from morpheus_pipelines.crm.rules.lead_status import OwnerState


def test_the_tally_counts_each_rung_and_where_the_work_went() -> None:
    tally = HandOverTally()
    tally.lead(7, OwnerState.ASSIGNED)
    tally.lead(7, OwnerState.ASSIGNED)
    tally.lead(9, OwnerState.FALLBACK)
    tally.lead(None, OwnerState.WAITING)
    tally.task(9)
    tally.task(None)
    assert (tally.leads_rerouted, tally.leads_to_fallback, tally.leads_waiting) == (2, 1, 1)
    assert (tally.tasks_moved, tally.tasks_unowned, tally.leads, tally.tasks) == (1, 1, 4, 2)
    assert tally.moves == {"7": {"leads": 2, "tasks": 0}, "9": {"leads": 1, "tasks": 1}}


def test_moves_add_rep_by_rep_without_changing_their_inputs() -> None:
    before = {"7": {"leads": 2, "tasks": 0}}
    more = {"7": {"leads": 1, "tasks": 3}, "8": {"leads": 0, "tasks": 1}}
    assert merged_moves(before, more) == {
        "7": {"leads": 3, "tasks": 3},
        "8": {"leads": 0, "tasks": 1},
    }
    assert before == {"7": {"leads": 2, "tasks": 0}}


def test_intents_are_per_hand_over_and_subject() -> None:
    assert hand_over_intent(3, "lead:x") != hand_over_intent(4, "lead:x")
    assert hand_over_intent(3, "lead:x") == "hand-over:3:lead:x"


def _line(tally: HandOverTally, *, finished: bool = True) -> HandOverLine:
    return HandOverLine(
        rep="Ana Lim",
        started_at=datetime(2026, 12, 4, 9, 30, tzinfo=UTC),
        finished=finished,
        tally=tally,
        names={"7": "Ben Ong"},
    )


def test_the_summary_names_who_left_and_who_got_what() -> None:
    tally = HandOverTally()
    tally.lead(7, OwnerState.ASSIGNED)
    tally.task(7)
    [line] = hand_over_lines([_line(tally)])
    assert line == (
        "Ana Lim left (2026-12-04 09:30 UTC): 1 open lead(s); went to Ben Ong "
        "(1 lead(s), 1 task(s)); 1 live task(s)."
    )
    assert hand_over_note([_line(tally)]).severity == "ok"


def test_the_note_warns_on_waiting_leads_unowned_tasks_or_an_unfinished_hand_over() -> None:
    waiting, unowned = HandOverTally(), HandOverTally()
    waiting.lead(None, OwnerState.WAITING)
    unowned.task(None)
    assert hand_over_note([_line(waiting)]).severity == "warning"
    assert "1 lead(s) wait for an owner" in hand_over_note([_line(waiting)]).lines[0]
    assert hand_over_note([_line(unowned)]).severity == "warning"
    assert hand_over_note([_line(HandOverTally(), finished=False)]).severity == "warning"
    assert hand_over_note([]).lines == ("No rep left in the last 24 hours.",)
