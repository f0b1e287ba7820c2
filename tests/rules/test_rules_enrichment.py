"""What Domain Intelligence is asked, and when an earlier answer is reused
(tenants/rules/enrichment.py; docs/pipeline.md, "Enrichment reuse")."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from morpheus_pipelines.platform.text.email_domain_class import (
    CORPORATE,
    FREE,
    MISSING,
    classifier_version,
)
from morpheus_pipelines.tenants.rules.enrichment import (
    ENRICHED,
    MAX_NAME_LENGTH,
    NOT_FOUND,
    UNAVAILABLE,
    answered_times,
    answers_by_key,
    asked_domain,
    clean_name,
    fingerprint_prefix,
    input_fingerprints,
    reuse_cutoff,
    service_inputs,
)

NOW = datetime(2026, 11, 29, 7, 30, tzinfo=UTC)


def candidates(*rows: tuple[object, object, object]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=["tenant_id", "name", "email"])


def fingerprint(tenant_id: object, name: object, email: object) -> str:
    return input_fingerprints(candidates((tenant_id, name, email)))[0]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("  Acme Pte Ltd ", "Acme Pte Ltd"),
        ("x" * (MAX_NAME_LENGTH + 10), "x" * MAX_NAME_LENGTH),
        ("   ", None),
        ("", None),
        (None, None),
        (42, None),
        (float("nan"), None),
    ],
)
def test_a_name_is_sent_trimmed_and_cut(value: object, expected: str | None) -> None:
    assert clean_name(value) == expected


def test_only_a_corporate_domain_is_sent() -> None:
    assert asked_domain("acme.com.sg", CORPORATE) == "acme.com.sg"
    assert asked_domain("gmail.com", FREE) is None
    assert asked_domain(None, MISSING) is None


def test_one_question_per_distinct_tenant_the_first_row_speaking_for_it() -> None:
    inputs = service_inputs(
        ["t-1", "t-2", "t-1", None, "t-3"],
        [" Acme ", "Beta", "Acme again", "Nobody", "Gamma"],
        ["acme.com", "gmail.com", "other.com", "x.com", "gamma.jp"],
        [CORPORATE, FREE, CORPORATE, CORPORATE, CORPORATE],
        answered={"t-3"},
    )
    assert inputs == [
        {"tenant_id": "t-1", "name": "Acme", "email_domain": "acme.com"},
        {"tenant_id": "t-2", "name": "Beta", "email_domain": None},
    ]


def test_every_fingerprint_starts_with_the_domain_lists_version() -> None:
    assert fingerprint_prefix() == f"{classifier_version()}:"
    prints = input_fingerprints(candidates(("t-1", "Acme", "ops@acme.com"), ("t-2", None, None)))
    assert all(p.startswith(fingerprint_prefix()) for p in prints)
    assert len(set(prints)) == 2


def test_the_stored_fingerprint_format_is_stable() -> None:
    # Stored fingerprints are compared with today's: a new format would ask every tenant again.
    question = b"t-1\x1fAcme\x1facme.com"
    expected = hashlib.sha1(question, usedforsecurity=False).hexdigest()
    assert fingerprint("t-1", "Acme", "ops@acme.com") == fingerprint_prefix() + expected
    no_domain = hashlib.sha1(b"t-1\x1f\x1f", usedforsecurity=False).hexdigest()
    assert fingerprint("t-1", None, "a@gmail.com") == fingerprint_prefix() + no_domain


def test_the_fingerprint_is_the_question_not_the_raw_values() -> None:
    asked = fingerprint("t-1", "Acme", "ops@acme.com")
    # Trimmed ids and names, another mailbox at the same domain: the same question.
    assert fingerprint(" t-1 ", "  Acme ", "sales@acme.com") == asked
    # Another name, another corporate domain, another tenant: another question.
    assert fingerprint("t-1", "Acme Holdings", "ops@acme.com") != asked
    assert fingerprint("t-1", "Acme", "ops@acme.co.jp") != asked
    assert fingerprint("t-2", "Acme", "ops@acme.com") != asked


def test_a_personal_email_is_not_part_of_the_question() -> None:
    # Neither is sent, so moving from one free mailbox to another asks nothing new.
    assert fingerprint("t-1", "Acme", "a@gmail.com") == fingerprint("t-1", "Acme", "b@yahoo.com")
    assert fingerprint("t-1", "Acme", "a@gmail.com") == fingerprint("t-1", "Acme", None)
    assert fingerprint("t-1", "Acme", "a@gmail.com") != fingerprint("t-1", "Acme", "a@acme.com")


def test_fingerprints_keep_the_candidates_order() -> None:
    frame = candidates(("t-1", "Acme", "ops@acme.com"), ("t-2", "Beta", "ops@beta.com"))
    assert input_fingerprints(frame) == [
        fingerprint("t-1", "Acme", "ops@acme.com"),
        fingerprint("t-2", "Beta", "ops@beta.com"),
    ]
    assert input_fingerprints(frame.iloc[:0]) == []


def test_reuse_needs_a_service_and_a_positive_maximum_age() -> None:
    assert reuse_cutoff(NOW, 30, configured=True) == NOW - timedelta(days=30)
    assert reuse_cutoff(NOW, 0, configured=True) is None
    assert reuse_cutoff(NOW, 30, configured=False) is None


def test_stored_answers_are_keyed_by_the_normalised_id() -> None:
    answer = {"tenant_id": " t-1 ", "enrichment_status": ENRICHED}
    found = answers_by_key(pd.Series([" t-1 ", "t-2", "   "]), {" t-1 ": answer, "   ": answer})
    assert found == {"t-1": answer}


def test_a_reused_answer_keeps_its_age_and_an_unavailable_one_has_none() -> None:
    earlier = {"t-1": {"enriched_at": NOW - timedelta(days=3)}}
    times = answered_times(
        pd.Series(["t-1", "t-2", "t-3", None]),
        [ENRICHED, NOT_FOUND, UNAVAILABLE, ENRICHED],
        earlier,
        now=NOW,
    )
    assert times == [NOW - timedelta(days=3), NOW, None, NOW]
