"""Validation of a fetched HubSpot target list before any write (docs/pipeline.md).

One rule per bullet of the specification. Each rule reports the figures it looked at, so an
asset check can show *why* it failed. A rule that could not be evaluated because the fetch
itself failed is reported as failed ("not evaluated"), never as passed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

COMPLETE = "COMPLETE"

# rule name -> the validation rule it implements (docs/pipeline.md) (used as check descriptions)
VALIDATION_RULES: dict[str, str] = {
    "list_processing_complete": "The list's processing status is COMPLETE.",
    "every_membership_page_fetched": "Every membership page was fetched successfully.",
    "company_ids_unique": "Company ids are unique after normalisation.",
    "membership_count_matches_list_size": (
        "The unique membership count equals the list size HubSpot reports."
    ),
    "every_member_has_company": "Every member company id has a company response.",
    "no_failed_company_batch": "No company batch read failed or came back partial (207).",
}


@dataclass
class FetchedList:
    """Everything read from HubSpot for one sync attempt, held in memory before validation."""

    list_id: str
    processing_status: str | None = None
    list_size: int | None = None
    pages_fetched: int = 0
    pagination_complete: bool = False
    member_ids: list[str] = field(default_factory=list)
    membership_timestamps: dict[str, str | None] = field(default_factory=dict)
    companies: dict[str, dict[str, Any]] = field(default_factory=dict)
    missing_company_ids: list[str] = field(default_factory=list)
    batches: int = 0
    failed_batches: int = 0
    fetch_error: str | None = None
    # Set when HubSpot's answer means a setting is wrong (401/403/404), naming the variable.
    configuration_error: str | None = None


@dataclass(frozen=True)
class RuleResult:
    rule: str
    passed: bool
    observed: dict[str, Any]
    description: str


def _result(rule: str, passed: bool, **observed: Any) -> RuleResult:
    return RuleResult(rule, bool(passed), observed, VALIDATION_RULES[rule])


def validate(fetched: FetchedList) -> list[RuleResult]:
    """Evaluate every rule; the snapshot may be written only when all pass."""
    duplicates = sorted(i for i, n in Counter(fetched.member_ids).items() if n > 1)
    unique_members = len(set(fetched.member_ids))
    without_company = sorted(set(fetched.member_ids) - set(fetched.companies))
    not_evaluated = {"not_evaluated": fetched.fetch_error} if fetched.fetch_error else {}
    return [
        _result(
            "list_processing_complete",
            fetched.processing_status == COMPLETE,
            processing_status=fetched.processing_status,
            **({} if fetched.processing_status else not_evaluated),
        ),
        _result(
            "every_membership_page_fetched",
            fetched.pagination_complete and not fetched.fetch_error,
            pages_fetched=fetched.pages_fetched,
            pagination_complete=fetched.pagination_complete,
            **not_evaluated,
        ),
        _result(
            "company_ids_unique",
            not duplicates and fetched.pagination_complete,
            memberships=len(fetched.member_ids),
            duplicate_ids=len(duplicates),
            duplicate_examples=duplicates[:5],
            **not_evaluated,
        ),
        _result(
            "membership_count_matches_list_size",
            fetched.pagination_complete and fetched.list_size == unique_members,
            unique_memberships=unique_members,
            list_size=fetched.list_size,
            **not_evaluated,
        ),
        _result(
            "every_member_has_company",
            fetched.pagination_complete
            and not fetched.fetch_error
            and not without_company
            and not fetched.missing_company_ids,
            members=unique_members,
            companies=len(fetched.companies),
            missing=len(set(without_company) | set(fetched.missing_company_ids)),
            missing_examples=sorted(set(without_company) | set(fetched.missing_company_ids))[:5],
            **not_evaluated,
        ),
        _result(
            "no_failed_company_batch",
            fetched.failed_batches == 0 and not fetched.fetch_error,
            batches=fetched.batches,
            failed_batches=fetched.failed_batches,
            **not_evaluated,
        ),
    ]
