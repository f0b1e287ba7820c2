"""The timeline over real HTTP: activities of every channel recorded once, read newest first
in pages, the WhatsApp window, and messages refused before they are queued."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from morpheus_pipelines.crm.models import Activity, OutboundMessage
from morpheus_pipelines.db.session import get_session
from tests.support.intake import Clock, Tenant, client, create_lead, intake_settings, serving


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timed_serving(database_url: str, clock: Clock) -> Iterator[tuple[str, Any]]:
    with serving(intake_settings(database_url, clock=clock)) as running:
        yield running


@pytest.fixture
def timed_service(timed_serving: tuple[str, Any]) -> str:
    return timed_serving[0]


@pytest.fixture
def other(database_url: str, timed_serving: tuple[str, Any]) -> Tenant:
    """A second subscription, made while the service runs (which then reloads its keys)."""
    made = Tenant(database_url)
    timed_serving[1].state.keys.expire()
    return made


def activity(tenant: Tenant, lead_id: str, external_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "subscription_id": str(tenant.subscription_id),
        "external_id": external_id,
        "channel": "whatsapp",
        "direction": "inbound",
        "lead_id": lead_id,
        "occurred_at": "2026-01-01T00:00:00+00:00",
        "body": "hello",
    } | fields


def count(url: str, model: Any) -> int:
    with get_session(url) as session:
        return session.scalar(select(func.count()).select_from(model))


def test_an_activity_is_recorded_once_and_a_different_body_is_refused(
    tenant: Tenant, timed_service: str, clock: Clock
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    body = activity(tenant, lead_id, "wa-1", occurred_at=clock.now.isoformat())

    first = http.post(f"{timed_service}/v1/activities", json=body)
    again = http.post(f"{timed_service}/v1/activities", json=body)
    changed = http.post(f"{timed_service}/v1/activities", json=body | {"body": "edited"})

    assert first.status_code == 201, first.text
    assert first.json()["channel"] == "whatsapp"
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert changed.status_code == 422
    assert changed.json()["error"] == "external_id_reused"
    with get_session(tenant.url) as session:
        stored = session.scalars(select(Activity).where(Activity.externalId == "wa-1")).one()
        assert stored.body == "hello"


def test_the_timeline_is_every_channel_newest_first_in_stable_pages(
    tenant: Tenant, timed_service: str, clock: Clock
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    base_time = clock.now - timedelta(hours=10)
    # Delivered out of order: the timeline orders by when it happened, not when it arrived.
    deliveries = [
        ("call-1", "call", "outbound", 3),
        ("wa-1", "whatsapp", "inbound", 1),
        ("mail-1", "email", "outbound", 2),
        ("wa-2", "whatsapp", "outbound", 4),
        ("mail-2", "email", "inbound", 5),
    ]
    for external_id, channel, direction, hour in deliveries:
        answer = http.post(
            f"{timed_service}/v1/activities",
            json=activity(
                tenant,
                lead_id,
                external_id,
                channel=channel,
                direction=direction,
                occurred_at=(base_time + timedelta(hours=hour)).isoformat(),
            ),
        )
        assert answer.status_code == 201, answer.text

    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = http.get(f"{timed_service}/v1/leads/{lead_id}/timeline", params=params).json()
        seen += [item["external_id"] for item in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break

    # The form submission that created the lead is the newest; then the rest by when they
    # happened, each once, over three pages.
    assert seen[0].startswith("form:")
    assert seen[1:] == ["mail-2", "wa-2", "call-1", "mail-1", "wa-1"]
    assert pages == 3


def test_bad_activities_name_the_field_and_write_nothing(
    tenant: Tenant, timed_service: str, clock: Clock, database_url: str, other: Tenant
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    other_lead = create_lead(client(other.key), timed_service, other, "s-1")
    before = count(database_url, Activity)
    future = (clock.now + timedelta(hours=1)).isoformat()
    cases = [
        ({"channel": "fax"}, 422, "channel"),
        ({"direction": "sideways"}, 422, "direction"),
        ({"occurred_at": "2026-01-01T09:00:00"}, 422, "occurred_at"),
        ({"occurred_at": "yesterday"}, 422, "occurred_at"),
        ({"occurred_at": future}, 422, "occurred_at"),
        ({"lead_id": "not-a-uuid"}, 422, "lead_id"),
        ({"occurred_at": "9999-12-31T23:59:59-23:59"}, 422, "occurred_at"),
        ({"body": "nul \u0000 byte"}, 422, "body"),
        ({"lead_id": other_lead}, 403, None),
        ({"lead_id": "00000000-0000-4000-8000-000000000000"}, 403, None),
        ({"subscription_id": str(other.subscription_id)}, 403, None),
    ]
    answers = []
    for overrides, status, field in cases:
        body = activity(tenant, lead_id, "x-1") | overrides
        answer = http.post(f"{timed_service}/v1/activities", json=body)
        answers.append((answer.status_code, answer.json()))
        assert answer.status_code == status, (overrides, answer.text)
        if field:
            assert field in [f["field"] for f in answer.json()["fields"]], answer.text

    # An unknown lead and another subscription's lead get the very same answer.
    assert answers[8] == answers[9]
    assert count(database_url, Activity) == before


def test_the_whatsapp_window_opens_on_inbound_only_and_closes_after_24_hours(
    tenant: Tenant, timed_service: str, clock: Clock
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    window = f"{timed_service}/v1/leads/{lead_id}/whatsapp-window"
    assert http.get(window).json() == {
        "open": False,
        "opened_at": None,
        "closes_at": None,
        "remaining_seconds": 0,
    }

    inbound_at = clock.now
    http.post(
        f"{timed_service}/v1/activities",
        json=activity(tenant, lead_id, "wa-in", occurred_at=inbound_at.isoformat()),
    )
    clock.advance(hours=20)
    http.post(
        f"{timed_service}/v1/activities",
        json=activity(
            tenant,
            lead_id,
            "wa-out",
            direction="outbound",
            occurred_at=clock.now.isoformat(),
        ),
    )
    opened = http.get(window).json()
    assert opened["open"] is True
    assert opened["remaining_seconds"] == 4 * 3600  # our own message did not reopen it
    assert opened["closes_at"] == (inbound_at + timedelta(hours=24)).isoformat()

    clock.advance(hours=4)
    closed = http.get(window).json()
    assert closed == opened | {"open": False, "remaining_seconds": 0}


def test_free_form_whatsapp_is_refused_outside_the_window_before_anything_is_queued(
    tenant: Tenant, timed_service: str, clock: Clock, database_url: str
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    inbound_at = clock.now
    http.post(
        f"{timed_service}/v1/activities",
        json=activity(tenant, lead_id, "wa-in", occurred_at=inbound_at.isoformat()),
    )
    free_form = {"lead_id": lead_id, "channel": "whatsapp", "kind": "free_form", "body": "Hi!"}
    template = {
        "lead_id": lead_id,
        "channel": "whatsapp",
        "kind": "template",
        "template_name": "follow_up_1",
    }
    messages = f"{timed_service}/v1/messages"

    def send(key: str, body: dict[str, Any]) -> Any:
        return http.post(messages, json=body, headers={"Idempotency-Key": key})

    clock.now = inbound_at + timedelta(hours=24) - timedelta(microseconds=1)
    inside = send("inside", free_form)
    clock.now = inbound_at + timedelta(hours=24)  # the boundary: closed
    refused = send("refused", free_form)
    template_answer = send("template", template)
    email = send("email", free_form | {"channel": "email"})

    assert inside.status_code == 202, inside.text
    assert refused.status_code == 422
    assert refused.json()["error"] == "whatsapp_window_closed"
    assert refused.json()["closed_at"] == (inbound_at + timedelta(hours=24)).isoformat()
    assert template_answer.status_code == 202  # templates are always allowed
    assert email.status_code == 202  # the window is WhatsApp's alone
    assert count(database_url, OutboundMessage) == 3


def test_a_message_with_an_idempotency_key_is_queued_once(
    tenant: Tenant, timed_service: str, database_url: str
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    body = {"lead_id": lead_id, "channel": "email", "kind": "template", "template_name": "t1"}
    headers = {"Idempotency-Key": "send-42"}

    first = http.post(f"{timed_service}/v1/messages", json=body, headers=headers)
    again = http.post(f"{timed_service}/v1/messages", json=body, headers=headers)
    other = http.post(
        f"{timed_service}/v1/messages", json=body | {"template_name": "t2"}, headers=headers
    )

    assert first.status_code == again.status_code == 202
    assert again.json()["message_id"] == first.json()["message_id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert other.status_code == 422 and other.json()["error"] == "idempotency_key_reused"
    assert count(database_url, OutboundMessage) == 1


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"kind": "template", "template_name": None}, "template_name"),
        ({"kind": "free_form", "body": None}, "body"),
        ({"channel": "pigeon"}, "channel"),
        ({"kind": "shout"}, "kind"),
    ],
)
def test_a_bad_message_names_the_field(
    tenant: Tenant, timed_service: str, database_url: str, overrides: dict, field: str
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    body = {"lead_id": lead_id, "channel": "email", "kind": "free_form", "body": "Hi"}
    body = {k: v for k, v in (body | overrides).items() if v is not None}

    answer = http.post(
        f"{timed_service}/v1/messages", json=body, headers={"Idempotency-Key": "bad-1"}
    )

    assert answer.status_code == 422
    assert field in [f["field"] for f in answer.json()["fields"]]
    assert count(database_url, OutboundMessage) == 0


def test_another_subscriptions_lead_is_403_on_every_timeline_endpoint(
    tenant: Tenant, timed_service: str, other: Tenant, database_url: str
) -> None:
    theirs = create_lead(client(other.key), timed_service, other, "s-1")
    mine = client(tenant.key)
    unknown = "00000000-0000-4000-8000-000000000000"

    answers = {
        name: [
            mine.get(f"{timed_service}/v1/leads/{lead}/timeline"),
            mine.get(f"{timed_service}/v1/leads/{lead}/whatsapp-window"),
            mine.post(
                f"{timed_service}/v1/messages",
                json={
                    "lead_id": lead,
                    "channel": "email",
                    "kind": "template",
                    "template_name": "t",
                },
                headers={"Idempotency-Key": f"probe-{name}"},
            ),
        ]
        for name, lead in (("theirs", theirs), ("unknown", unknown))
    }

    for theirs_answer, unknown_answer in zip(answers["theirs"], answers["unknown"], strict=True):
        assert theirs_answer.status_code == unknown_answer.status_code == 403
        assert theirs_answer.json() == unknown_answer.json()
    assert count(database_url, OutboundMessage) == 0


def test_a_bad_limit_or_cursor_is_422(tenant: Tenant, timed_service: str) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    timeline = f"{timed_service}/v1/leads/{lead_id}/timeline"
    huge_id = base64.urlsafe_b64encode(b"2026-01-01T00:00:00+00:00|99999999999999999999").decode()
    for params, field in (
        ({"limit": "\u00b2"}, "limit"),
        ({"limit": "0"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": huge_id}, "cursor"),
    ):
        answer = http.get(timeline, params=params)
        assert answer.status_code == 422, (params, answer.text)
        assert answer.json()["fields"][0]["field"] == field


@pytest.mark.parametrize(
    "external_id",
    ["form:web-form:s-2", "FORM:web-form:s-2", "dialer-call:77", "hubspot:9", "12345"],
)
def test_an_external_id_the_product_keeps_is_refused(
    tenant: Tenant, timed_service: str, clock: Clock, database_url: str, external_id: str
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    before = count(database_url, Activity)
    planted = http.post(
        f"{timed_service}/v1/activities",
        json=activity(tenant, lead_id, external_id, occurred_at=clock.now.isoformat()),
    )
    assert planted.status_code == 422, planted.text
    assert planted.json()["fields"][0]["field"] == "external_id"
    assert count(database_url, Activity) == before


def test_a_planted_form_id_cannot_take_a_later_leads_form_entry(
    tenant: Tenant, timed_service: str, clock: Clock
) -> None:
    http = client(tenant.key)
    first = create_lead(http, timed_service, tenant, "s-1")
    http.post(
        f"{timed_service}/v1/activities",
        json=activity(tenant, first, "form:web-form:s-2", occurred_at=clock.now.isoformat()),
    )
    later = create_lead(http, timed_service, tenant, "s-2")
    items = http.get(f"{timed_service}/v1/leads/{later}/timeline").json()["items"]
    assert [(i["channel"], i["external_id"]) for i in items] == [("form", "form:web-form:s-2")]


def _opt_out(url: str, tenant: Tenant, email: str, opted_out: bool, clock: Clock) -> None:
    from morpheus_pipelines.crm.repositories.target_emails import TargetEmailsRepository

    with get_session(url) as session:  # as HubSpot's webhook records it
        TargetEmailsRepository().set_newsletter_opt_out(
            session,
            subscription_id=tenant.subscription_id,
            email=email,
            opted_out=opted_out,
            occurred_at=clock.now,
        )


def test_an_email_to_an_opted_out_address_is_refused_and_nothing_is_queued(
    tenant: Tenant, timed_service: str, clock: Clock, database_url: str
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")  # Buyer@Example.com
    # Stored in another case than the lead's: the comparison ignores case.
    _opt_out(database_url, tenant, "BUYER@example.COM", True, clock)
    email = {"lead_id": lead_id, "channel": "email", "kind": "template", "template_name": "t1"}
    whatsapp = email | {"channel": "whatsapp"}
    messages = f"{timed_service}/v1/messages"

    refused = http.post(messages, json=email, headers={"Idempotency-Key": "e-1"})
    on_whatsapp = http.post(messages, json=whatsapp, headers={"Idempotency-Key": "w-1"})

    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == "opted_out"
    assert on_whatsapp.status_code == 202  # the newsletter opt-out is the email channel's
    assert count(database_url, OutboundMessage) == 1

    clock.advance(minutes=1)
    _opt_out(database_url, tenant, "buyer@example.com", False, clock)
    again = http.post(messages, json=email, headers={"Idempotency-Key": "e-1"})
    assert again.status_code == 202, again.text  # a refusal stores no answer to replay
    assert count(database_url, OutboundMessage) == 2


def test_an_opt_out_of_another_subscription_does_not_refuse(
    tenant: Tenant, timed_service: str, other: Tenant, clock: Clock, database_url: str
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    _opt_out(database_url, other, "buyer@example.com", True, clock)
    body = {"lead_id": lead_id, "channel": "email", "kind": "template", "template_name": "t1"}

    answer = http.post(f"{timed_service}/v1/messages", json=body, headers={"Idempotency-Key": "1"})

    assert answer.status_code == 202, answer.text


def test_a_message_without_an_idempotency_key_is_400_and_nothing_is_queued(
    tenant: Tenant, timed_service: str, database_url: str
) -> None:
    http = client(tenant.key)
    lead_id = create_lead(http, timed_service, tenant, "s-1")
    body = {"lead_id": lead_id, "channel": "email", "kind": "template", "template_name": "t1"}

    answers = [http.post(f"{timed_service}/v1/messages", json=body) for _ in range(2)]

    for answer in answers:
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == "idempotency_key_required"
    assert count(database_url, OutboundMessage) == 0
