"""The hand-overs of reps who left, as a note for a report's Operations section (docs/
reports.md, "Operations"): whose leads and tasks moved to whom in the last day, and what is
left without an owner.

Pure: the caller reads the hand-overs and passes them with the time.
"""

from __future__ import annotations

from collections.abc import Sequence

from morpheus_pipelines.crm.rules.hand_over import HandOverLine, hand_over_lines
from morpheus_pipelines.platform.report_notes import OperationsNote

TITLE = "Reps who left"


def hand_over_note(hand_overs: Sequence[HandOverLine]) -> OperationsNote:
    """``ok`` listing what moved; a warning when a lead waits, a task has nobody or a
    hand-over has not finished."""
    if not hand_overs:
        return OperationsNote(TITLE, "ok", ("No rep left in the last 24 hours.",))
    unsettled = any(
        h.tally.leads_waiting or h.tally.tasks_unowned or not h.finished for h in hand_overs
    )
    return OperationsNote(
        TITLE, "warning" if unsettled else "ok", tuple(hand_over_lines(hand_overs))
    )
