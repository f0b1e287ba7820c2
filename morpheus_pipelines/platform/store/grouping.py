"""Counts per dimension from one ``GROUP BY`` over every dimension at once.

PostgreSQL aggregates ``GROUPING SETS`` in one process; a plain ``GROUP BY`` of all the
dimensions is aggregated by the parallel workers, and its few groups are summed here into each
dimension's counts (docs/decisions/0069)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def counts_by_dimension(
    groups: Iterable[tuple[Sequence[object], int]], dimensions: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Each of ``dimensions``' counts per value, from ``groups``: each group's values (in
    ``dimensions`` order) and its row count. A None value is outside that dimension (a row
    its condition leaves out) and is not counted in it."""
    counts: dict[str, dict[str, int]] = {dimension: {} for dimension in dimensions}
    for values, n in groups:
        for dimension, value in zip(dimensions, values, strict=True):
            if value is not None:
                by_value = counts[dimension]
                by_value[str(value)] = by_value.get(str(value), 0) + int(n)
    return counts
