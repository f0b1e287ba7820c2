"""Each dimension's counts summed from the groups of one GROUP BY over every dimension."""

from __future__ import annotations

from morpheus_pipelines.platform.store.grouping import counts_by_dimension


def test_each_dimension_sums_its_groups_and_leaves_out_none() -> None:
    groups = [(("P1", "score"), 3), (("P1", None), 2), (("P2", "score"), 4), ((None, None), 7)]
    assert counts_by_dimension(groups, ["priority", "reason"]) == {
        "priority": {"P1": 5, "P2": 4},
        "reason": {"score": 7},
    }


def test_no_groups_give_empty_counts_for_every_dimension() -> None:
    assert counts_by_dimension([], ["priority", "reason"]) == {"priority": {}, "reason": {}}
