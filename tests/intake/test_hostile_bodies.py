"""Hostile bodies and headers get a 4xx naming what is wrong, or a JSON 500 with a request
id, and never a traceback, an unmasked email or "database unavailable" in the log
(docs/security.md, "Bodies" and "Errors and logs")."""

from __future__ import annotations

import json
import logging
import socket

import psycopg
import pytest
from sqlalchemy.engine import make_url

from morpheus_pipelines.platform.observability.events import LOGGER_NAME
from tests.support.databases import admin_url
from tests.support.intake import Tenant, client, create_lead, problem_of

EMAIL = "Hostile.Buyer@Example.com"


def _post_raw(base: str, key: str, path: str, raw: bytes, headers: dict | None = None):
    return client(key).post(
        f"{base}{path}",
        data=raw,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def _lead_json(tenant: Tenant, payload_text: str) -> bytes:
    """A lead body whose ``payload`` is the given JSON text, verbatim."""
    body = json.dumps(tenant.lead_body(contact={"email": EMAIL}) | {"payload": "@@"})
    return body.replace('"@@"', payload_text).encode()


def _assert_quiet(capfd, event_lines) -> None:
    """Nothing the service wrote holds the customer's email, a traceback or SQL
    parameters, and no event says the database was away."""
    out, err = capfd.readouterr()
    written = out + err + "\n".join(event_lines.lines)
    assert EMAIL.lower() not in written.lower()
    assert "Traceback" not in written and "[parameters" not in written
    assert event_lines.events("intake_database_unavailable") == []


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ('{"score": NaN}', "payload.score"),
        ('{"score": Infinity}', "payload.score"),
        ('{"nested": {"low": -Infinity}}', "payload.nested.low"),
        ('{"list": [1, 1e400]}', "payload.list.1"),
        ('{"note": "\\ud800"}', "payload.note"),
        ('{"\\udfff": 1}', "payload.\\udfff"),
    ],
)
def test_values_jsonb_cannot_hold_are_422_naming_the_field(
    tenant: Tenant, service, payload: str, field: str, capfd, event_lines
) -> None:
    base, _ = service
    answer = _post_raw(base, tenant.key, "/v1/leads", _lead_json(tenant, payload))
    assert answer.status_code == 422, answer.text
    assert [f["field"] for f in answer.json()["fields"]] == [field]
    assert tenant.leads() == 0
    _assert_quiet(capfd, event_lines)


@pytest.mark.parametrize("path", ["/v1/leads", "/v1/activities", "/v1/messages"])
@pytest.mark.parametrize("depth", [33, 600, 20_000])
def test_deep_nesting_is_422_on_every_endpoint(
    tenant: Tenant, service, path: str, depth: int, capfd, event_lines
) -> None:
    base, _ = service
    raw = b'{"payload": ' + b"[" * depth + b"]" * depth + b"}"
    answer = _post_raw(base, tenant.key, path, raw, {"Idempotency-Key": "deep-1"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["fields"][0] == {
        "field": "body",
        "message": "the body nests deeper than 32 levels",
    }
    _assert_quiet(capfd, event_lines)


def test_nesting_within_the_bound_is_stored(tenant: Tenant, service) -> None:
    base, _ = service
    payload = '{"a": ' + "[" * 30 + '"deep"' + "]" * 30 + "}"  # 32 levels with the body
    answer = _post_raw(base, tenant.key, "/v1/leads", _lead_json(tenant, payload))
    assert answer.status_code == 201, answer.text
    assert tenant.leads() == 1


@pytest.mark.parametrize("path", ["/v1/leads", "/v1/messages"])
@pytest.mark.parametrize("length", [201, 3_000])
def test_an_over_long_idempotency_key_is_422_not_an_outage(
    tenant: Tenant, service, path: str, length: int, capfd, event_lines
) -> None:
    base, _ = service
    answer = client(tenant.key).post(
        f"{base}{path}", json=tenant.lead_body(), headers={"Idempotency-Key": "k" * length}
    )
    assert answer.status_code == 422 and "Retry-After" not in answer.headers
    assert answer.json()["fields"][0]["field"] == "Idempotency-Key"
    assert tenant.leads() == 0
    _assert_quiet(capfd, event_lines)


def test_a_200_character_idempotency_key_is_taken(tenant: Tenant, service) -> None:
    base, _ = service
    answer = client(tenant.key).post(
        f"{base}/v1/leads", json=tenant.lead_body(), headers={"Idempotency-Key": "k" * 200}
    )
    assert answer.status_code == 201, answer.text


def test_an_unexpected_failure_is_a_problem_500_with_one_line_and_no_parameters(
    tenant: Tenant, service, database_url: str, pg_server, capfd, event_lines
) -> None:
    """A schema the service does not expect (a table renamed under it) is a fault of the
    service: a 500 the sender can quote, one ERROR line naming only the exception's type, and
    where it was raised on a DEBUG line without any value."""
    base, _ = service
    database = make_url(database_url).database
    with psycopg.connect(admin_url(pg_server, database), autocommit=True) as conn:
        conn.execute("ALTER TABLE leads RENAME TO leads_moved")
    logging.getLogger(LOGGER_NAME).setLevel(logging.DEBUG)
    answer = client(tenant.key).post(
        f"{base}/v1/leads",
        json=tenant.lead_body(contact={"email": EMAIL, "phone": "+65 9123 4567"}),
        headers={"X-Request-Id": "sender-req-42"},
    )
    assert problem_of(answer, 500, "internal_error")["request_id"] == "sender-req-42"
    assert answer.headers["X-Request-Id"] == "sender-req-42"
    errors = event_lines.events("intake_unhandled_error")
    assert len(errors) == 1 and errors[0]["request_id"] == "sender-req-42"
    assert errors[0]["error"] == "ProgrammingError" and errors[0]["path"] == "/v1/leads"
    trace = event_lines.events("intake_unhandled_error_trace")
    assert len(trace) == 1 and trace[0]["level"] == "DEBUG"
    assert "crm/api/" in trace[0]["trace"] and "leads_moved" not in trace[0]["trace"]
    assert "65 9123" not in trace[0]["trace"] and "91234567" not in trace[0]["trace"]
    _assert_quiet(capfd, event_lines)


def test_every_answer_has_a_request_id(tenant: Tenant, service) -> None:
    base, _ = service
    first = client(tenant.key).post(f"{base}/v1/leads", json=tenant.lead_body())
    second = client(None).get(f"{base}/healthz")
    ids = {first.headers["X-Request-Id"], second.headers["X-Request-Id"]}
    assert len(ids) == 2 and all(len(i) == 32 for i in ids)
    hostile_id = "<script>" * 10
    hostile = client(None).get(f"{base}/healthz", headers={"X-Request-Id": hostile_id})
    assert len(hostile.headers["X-Request-Id"]) == 32  # not echoed: replaced


def test_a_client_hanging_up_mid_body_is_logged_as_such(
    tenant: Tenant, service, capfd, event_lines
) -> None:
    base, _ = service
    port = int(base.rsplit(":", 1)[1])
    head = (
        "POST /v1/leads HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {tenant.key}\r\nContent-Type: application/json\r\n"
        "Content-Length: 5000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode() + b'{"subscription_id": ')
    event_lines.wait_for("http_client_disconnected")
    create_lead(client(tenant.key), base, tenant, "after")
    statuses = [e["status"] for e in event_lines.events("http_request")]
    assert 499 in statuses and 500 not in statuses
    assert len(event_lines.events("http_client_disconnected")) == 1
    assert event_lines.events("intake_unhandled_error") == []
    assert tenant.leads() == 1
    _assert_quiet(capfd, event_lines)
