"""A departed rep's hand-over as rules (docs/ownership.md, "When a rep leaves"): the tally of
what moved where, the intents its HubSpot writes are queued under, and the lines that tell a
sales manager about it.

Pure: no database, no HTTP. The step (``crm.steps.rep_hand_over``) moves the work and the
repository (``crm.repositories.rep_hand_overs``) records it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from morpheus_pipelines.crm.rules.lead_status import OwnerState


def hand_over_intent(hand_over_id: int, subject: str) -> str:
    """The outbox intent of one write of one hand-over: a lead's or a task's new owner. Keyed
    by the hand-over, so a lead that comes back to a rep and leaves again is written again,
    and a re-run of the same hand-over writes nothing twice."""
    return f"hand-over:{hand_over_id}:{subject}"


@dataclass
class HandOverTally:
    """What one hand-over (or one chunk of it) moved: leads by the ladder's rung, tasks, and
    per new rep how many of each."""

    leads_rerouted: int = 0
    leads_to_fallback: int = 0
    leads_waiting: int = 0
    tasks_moved: int = 0
    tasks_unowned: int = 0
    moves: dict[str, dict[str, int]] = field(default_factory=dict)

    def lead(self, new_rep_id: int | None, state: OwnerState) -> None:
        if state is OwnerState.WAITING or new_rep_id is None:
            self.leads_waiting += 1
            return
        if state is OwnerState.FALLBACK:
            self.leads_to_fallback += 1
        else:
            self.leads_rerouted += 1
        self._move(new_rep_id, "leads")

    def task(self, new_rep_id: int | None) -> None:
        if new_rep_id is None:
            self.tasks_unowned += 1
            return
        self.tasks_moved += 1
        self._move(new_rep_id, "tasks")

    def _move(self, rep_id: int, what: str) -> None:
        to = self.moves.setdefault(str(rep_id), {"leads": 0, "tasks": 0})
        to[what] += 1

    @property
    def leads(self) -> int:
        return self.leads_rerouted + self.leads_to_fallback + self.leads_waiting

    @property
    def tasks(self) -> int:
        return self.tasks_moved + self.tasks_unowned


def merged_moves(
    before: Mapping[str, Mapping[str, int]], more: Mapping[str, Mapping[str, int]]
) -> dict[str, dict[str, int]]:
    """Two ``moves`` maps added rep by rep (a hand-over's row, and its next chunk)."""
    merged = {rep: dict(counts) for rep, counts in before.items()}
    for rep, counts in more.items():
        to = merged.setdefault(rep, {"leads": 0, "tasks": 0})
        for what, n in counts.items():
            to[what] = to.get(what, 0) + n
    return merged


@dataclass(frozen=True)
class HandOverLine:
    """One finished (or still running) hand-over as the Daily Summary tells it."""

    rep: str
    started_at: datetime
    finished: bool
    tally: HandOverTally
    names: Mapping[str, str]  # new rep id -> how to call them


def hand_over_lines(hand_overs: Iterable[HandOverLine]) -> list[str]:
    """Plain lines, one a hand-over: who left, when, what went to whom, what is left waiting."""
    lines = []
    for item in hand_overs:
        t = item.tally
        parts = [f"{t.leads} open lead(s)"]
        if t.moves:
            given = ", ".join(
                f"{item.names.get(rep, 'rep ' + rep)} {_counts(counts)}"
                for rep, counts in sorted(t.moves.items(), key=lambda kv: kv[0])
            )
            parts.append(f"went to {given}")
        if t.leads_waiting:
            parts.append(f"{t.leads_waiting} lead(s) wait for an owner")
        parts.append(f"{t.tasks} live task(s)")
        if t.tasks_unowned:
            parts.append(f"{t.tasks_unowned} task(s) have nobody to take them")
        state = "" if item.finished else " (still running)"
        lines.append(
            f"{item.rep} left ({item.started_at:%Y-%m-%d %H:%M} UTC){state}: "
            + "; ".join(parts)
            + "."
        )
    return lines


def _counts(counts: Mapping[str, Any]) -> str:
    leads, tasks = int(counts.get("leads", 0)), int(counts.get("tasks", 0))
    shown = [f"{leads} lead(s)" if leads else "", f"{tasks} task(s)" if tasks else ""]
    return "(" + ", ".join(part for part in shown if part) + ")"
