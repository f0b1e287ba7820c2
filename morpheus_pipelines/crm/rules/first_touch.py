"""The first-touch SLA report (docs/ownership.md, "First-touch SLA"): per pool and per rep,
the leads whose first touch fell due, how many were met and missed, and the share met.
Pending leads (due, the sweep not yet past them) count as due only."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SlaLine:
    """One row of the report: a pool (``rep`` ``None``) or one rep within it."""

    pool: str
    rep: str | None
    due: int
    met: int
    missed: int

    @property
    def met_share(self) -> float | None:
        judged = self.met + self.missed
        return None if judged == 0 else self.met / judged


def sla_lines(rows: Iterable[tuple[str, str | None, int, int, int]]) -> list[SlaLine]:
    """``(pool, rep, due, met, missed)`` rows as the report's lines: each pool's total, then
    its reps, pools by name."""
    by_pool: dict[str, list[SlaLine]] = {}
    for pool, rep, due, met, missed in rows:
        by_pool.setdefault(pool, []).append(SlaLine(pool, rep, due, met, missed))
    lines: list[SlaLine] = []
    for pool in sorted(by_pool):
        reps = sorted(by_pool[pool], key=lambda line: line.rep or "")
        lines.append(
            SlaLine(
                pool,
                None,
                sum(r.due for r in reps),
                sum(r.met for r in reps),
                sum(r.missed for r in reps),
            )
        )
        lines.extend(reps)
    return lines


def render_sla_markdown(lines: list[SlaLine], window: str) -> str:
    """The report as a Markdown table; % met is of the leads judged (met or missed)."""
    out = [
        f"First-touch SLA, leads due {window}",
        "",
        "| pool | rep | due | met | missed | % met |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for line in lines:
        share = "–" if line.met_share is None else f"{line.met_share:.0%}"
        rep = "**all**" if line.rep is None else line.rep
        out.append(f"| {line.pool} | {rep} | {line.due} | {line.met} | {line.missed} | {share} |")
    if not lines:
        out.append("| – | – | 0 | 0 | 0 | – |")
    return "\n".join(out)
