"""Pure rules of the ownership slice: the owner list and the fairness report."""

from __future__ import annotations

from morpheus_pipelines.crm.rules.fairness import RepShare, fairness
from morpheus_pipelines.crm.rules.owner_mirror import owner_list


def test_owner_list_matches_on_lower_cased_email_and_active_wins() -> None:
    owners = owner_list(
        [{"id": "1", "email": " Ana@Acme.test "}, {"id": "2", "email": "ana@acme.test"}],
        [{"id": "3", "email": "ANA@acme.test"}, {"id": "4", "email": "ben@acme.test"}],
    )
    assert owners.owners["ana@acme.test"].hubspot_owner_id == "1"
    assert owners.owners["ana@acme.test"].active
    assert not owners.owners["ben@acme.test"].active
    assert owners.duplicates == 2


def test_owner_list_skips_owners_without_email_and_machines() -> None:
    owners = owner_list(
        [{"id": "1"}, {"id": "2", "email": ""}, {"id": "9", "email": "ai@x.test"}],
        [],
        not_human=frozenset({"9"}),
    )
    assert owners.owners == {}
    assert (owners.without_email, owners.not_human) == (2, 1)


def test_a_perfect_rotation_is_fair_and_an_inactive_rep_is_listed_as_skipped() -> None:
    report = fairness(
        [
            RepShare(1, "a@x.test", True, 4),
            RepShare(2, "b@x.test", True, 3),
            RepShare(3, "c@x.test", True, 3),
            RepShare(4, "left@x.test", False, 0),
        ]
    )
    assert (report.total, report.eligible_reps) == (10, 3)
    assert (report.spread, report.perfect_spread, report.fair) == (1, 1, True)
    assert [r.expected for r in report.rows] == [3.33, 3.33, 3.33, 0.0]
    assert report.skipped_inactive == ["left@x.test"]


def test_an_uneven_rotation_is_reported_unfair() -> None:
    report = fairness([RepShare(1, "a@x.test", True, 6), RepShare(2, "b@x.test", True, 2)])
    assert (report.spread, report.perfect_spread, report.fair) == (4, 0, False)
    assert report.max_abs_deviation == 2.0


def test_no_eligible_rep_gives_an_empty_but_valid_report() -> None:
    report = fairness([RepShare(1, "left@x.test", False, 2)])
    assert (report.eligible_reps, report.spread, report.rows[0].expected) == (0, 0, 0.0)
