"""Notes for a report's Operations section: something that went wrong and that a person must act
on (or the word that all is well), told as a title, a severity and a few plain lines
(docs/reports.md, "Operations").

Product-neutral on purpose: the crm product writes notes, the tenants product's reports render
them and the Dagster definitions carry them from one to the other, and the two products never
import each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["ok", "warning", "error"]
# Most urgent first: the order in which a report shows its notes.
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "ok")


@dataclass(frozen=True)
class OperationsNote:
    """One note: ``error`` (a person must act), ``warning`` (worth a look) or ``ok``. The lines
    are plain text; every rendering escapes them and masks email-shaped text in them."""

    title: str
    severity: Severity
    lines: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(
                f"an operations note's severity is one of {', '.join(SEVERITIES)}, "
                f"got {self.severity!r}"
            )
        if not str(self.title).strip():
            raise ValueError("an operations note needs a title")
        # A list (or any iterable) given for ``lines`` is kept as a tuple: the note stays frozen.
        object.__setattr__(self, "lines", tuple(str(line) for line in self.lines))


def most_urgent_first(notes: Iterable[OperationsNote]) -> list[OperationsNote]:
    """Errors, then warnings, then the rest; notes of one severity keep their order."""
    return sorted(notes, key=lambda note: SEVERITIES.index(note.severity))


def severity_counts(notes: Iterable[OperationsNote]) -> dict[str, int]:
    """How many notes of each severity (every severity, 0 when absent)."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for note in notes:
        counts[note.severity] += 1
    return counts
