"""The HubSpot outbox rules (docs/hubspot-outbox.md): back-off, the dead state, batches, the
keys the upserts are made by and the properties each subject becomes. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from morpheus_pipelines.crm.rules.hubspot_outbox import (
    BATCH_SIZE,
    FIRST_RETRY,
    LEAD_KEY_PROPERTY,
    LONGEST_RETRY,
    MAX_ATTEMPTS,
    OutboxStatus,
    after_failure,
    batches,
    call_properties,
    contact_key,
    contact_properties,
    retry_delay,
    task_properties,
)
from morpheus_pipelines.crm.rules.ownership import DIALER_FALLBACK_HUBSPOT_OWNER_ID

NOW = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)


def test_the_back_off_doubles_from_the_first_retry_up_to_the_longest() -> None:
    delays = [retry_delay(n) for n in range(1, MAX_ATTEMPTS)]
    assert delays[0] == FIRST_RETRY
    assert delays[1] == FIRST_RETRY * 2
    assert max(delays) == LONGEST_RETRY
    assert delays == sorted(delays)


def test_retry_after_is_honoured_when_it_is_longer_than_the_back_off() -> None:
    assert retry_delay(1, retry_after=timedelta(minutes=10)) == timedelta(minutes=10)
    assert retry_delay(5, retry_after=timedelta(seconds=1)) == retry_delay(5)


def test_a_retry_follows_a_failure() -> None:
    with pytest.raises(ValueError):
        retry_delay(0)


def test_an_hour_long_outage_kills_no_row() -> None:
    # Every attempt but the last waits its back-off: the attempts span well over an hour.
    span = sum((retry_delay(n) for n in range(1, MAX_ATTEMPTS)), timedelta())
    assert span > timedelta(hours=2)


def test_a_row_is_dead_after_its_last_attempt_and_pending_before() -> None:
    status, at = after_failure(MAX_ATTEMPTS - 1, NOW)
    assert status is OutboxStatus.PENDING and at > NOW
    status, at = after_failure(MAX_ATTEMPTS, NOW)
    assert status is OutboxStatus.DEAD and at == NOW


def test_batches_hold_at_most_the_batch_size_and_lose_nothing() -> None:
    rows = list(range(2 * BATCH_SIZE + 7))
    chunks = list(batches(rows))
    assert [len(c) for c in chunks] == [BATCH_SIZE, BATCH_SIZE, 7]
    assert [row for chunk in chunks for row in chunk] == rows
    assert list(batches([])) == []
    with pytest.raises(ValueError):
        list(batches(rows, 0))


def test_a_lead_with_an_email_is_upserted_by_its_email_in_lower_case() -> None:
    lead = {"lead_id": "L1", "email": "Ana@Example.com", "phone": "+6591234567", "owner_id": "7"}
    assert contact_key(lead) == ("ana@example.com", "email")
    properties = contact_properties(lead)
    assert properties["hubspot_owner_id"] == "7"
    assert LEAD_KEY_PROPERTY not in properties


def test_a_phone_only_lead_is_upserted_by_its_lead_key() -> None:
    lead = {"lead_id": "L2", "email": None, "phone": "+6591234567", "owner_id": "7"}
    key, id_property = contact_key(lead)
    assert (key, id_property) == ("lead:L2", LEAD_KEY_PROPERTY)
    properties = contact_properties(lead)
    assert properties[LEAD_KEY_PROPERTY] == key
    assert properties["phone"] == "+6591234567"
    assert "email" not in properties  # blank values are not sent (they would clear HubSpot's)


def test_a_task_is_owned_by_its_rep_and_high_priority_once_escalated() -> None:
    task = {
        "task_id": 5,
        "segment": "supplier",
        "due_at": NOW,
        "status": "PENDING",
        "escalation_stage": 0,
        "owner_id": "101",
    }
    properties = task_properties(task)
    assert properties["hubspot_owner_id"] == "101"
    assert properties["hs_task_status"] == "NOT_STARTED"
    assert properties["hs_task_priority"] == "MEDIUM"
    assert properties["hs_timestamp"] == str(int(NOW.timestamp() * 1000))
    escalated = task_properties(task | {"escalation_stage": 2, "status": "COMPLETED"})
    assert escalated["hs_task_priority"] == "HIGH"
    assert escalated["hs_task_status"] == "COMPLETED"
    assert "hubspot_owner_id" not in task_properties(task | {"owner_id": None})


def test_an_ai_call_is_owned_by_the_dialer_whoever_owns_the_contact() -> None:
    call = {"occurred_at": NOW, "subject": None, "body": None, "direction": "outbound"}
    properties = call_properties(call)
    assert properties["hubspot_owner_id"] == DIALER_FALLBACK_HUBSPOT_OWNER_ID
    assert properties["hs_call_title"] == "AI call"
    assert properties["hs_call_direction"] == "OUTBOUND"  # HubSpot's spelling, ours stored lower


def test_the_rules_key_by_the_properties_the_client_creates() -> None:
    from morpheus_pipelines.crm.rules import hubspot_outbox
    from morpheus_pipelines.platform.clients.hubspot import properties

    assert hubspot_outbox.LEAD_KEY_PROPERTY == properties.LEAD_KEY_PROPERTY
    assert hubspot_outbox.INTENT_KEY_PROPERTY == properties.INTENT_KEY_PROPERTY
