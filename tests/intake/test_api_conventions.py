"""The conventions every intake answer keeps (docs/leads.md, "Errors", "Headers on every
answer"): RFC 9457 problems for every error, Starlette's own 404 and 405 included;
``Location`` on every 201; ``X-Request-Id`` echoed and on every log line of the request;
``RateLimit-Policy`` and ``RateLimit`` on every ``/v1/`` answer."""

from __future__ import annotations

import re
import uuid

import requests
from starlette.applications import Starlette

from morpheus_pipelines.crm.api import leads
from morpheus_pipelines.crm.api.openapi import openapi_document
from morpheus_pipelines.devtools.demo.intake import serving_in_thread
from tests.support.events import EventLines
from tests.support.intake import Tenant, client, intake_settings, problem_of, serving

_ITEM = re.compile(r'^"(?P<name>[a-z-]+)"(?P<params>(;[a-z]+=\d+)+)$')


def structured_items(value: str) -> dict[str, dict[str, int]]:
    """A ``RateLimit``/``RateLimit-Policy`` field's list items: ``{name: {param: int}}``."""
    items = {}
    for item in value.split(","):
        match = _ITEM.match(item.strip())
        assert match, value
        params = dict(part.split("=") for part in match["params"].strip(";").split(";"))
        items[match["name"]] = {key: int(number) for key, number in params.items()}
    return items


# -- problems -----------------------------------------------------------------------------------


def test_an_unknown_path_and_an_unknown_method_are_problems(tenant: Tenant, service) -> None:
    base, _ = service
    http = client(tenant.key)
    missing = problem_of(http.get(f"{base}/v1/nothing-here"), 404, "not_found")
    assert missing["type"] == "/docs#problem-not_found"
    answer = http.delete(f"{base}/v1/leads")
    problem_of(answer, 405, "method_not_allowed")
    # Both routes of the path: Starlette names only the methods of the first route it tries.
    assert answer.headers["Allow"] == "GET, HEAD, POST"
    problem_of(http.put(f"{base}/healthz"), 405, "method_not_allowed")


def test_without_the_handlers_starlette_answers_both_in_plain_text() -> None:
    """The failure the problem handlers exist for: the same routes, Starlette's defaults."""
    with serving_in_thread(Starlette(routes=leads.ROUTES)) as base:
        missing = requests.get(f"{base}/v1/nothing-here", timeout=5)
        wrong = requests.delete(f"{base}/v1/leads", timeout=5)
    assert missing.headers["Content-Type"].startswith("text/plain")
    assert wrong.headers["Content-Type"].startswith("text/plain")
    assert wrong.headers["Allow"] == "POST"  # the GET route of the same path is not named


def test_an_invalid_body_is_a_problem_with_its_fields_and_the_contracts_members(
    tenant: Tenant, service
) -> None:
    base, _ = service
    http = client(tenant.key)
    refused = http.post(f"{base}/v1/leads", json=tenant.lead_body(contact={"emial": "x"}))
    body = problem_of(refused, 422, "invalid_request")
    assert body["fields"] == [
        {"field": "contact.emial", "message": "Extra inputs are not permitted"}
    ]
    assert "contact.emial" in body["detail"]
    too_large = http.post(f"{base}/v1/leads", data=b"[" + b" " * 70_000 + b"]")
    assert problem_of(too_large, 413, "body_too_large")["limit_bytes"] == 65_536


def test_a_request_that_is_not_http_is_a_problem_too(service) -> None:
    import socket

    base, _ = service
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
        answer = sock.recv(4096)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert b"content-type: application/problem+json" in head
    assert b'"error":"bad_request"' in body


# -- Location ----------------------------------------------------------------------------------


def test_every_201_says_where_its_resource_is_read(tenant: Tenant, service) -> None:
    base, _ = service
    tenant.add_rep("ana@acme.test", "101")
    http = client(tenant.key)
    created = http.post(f"{base}/v1/leads", json=tenant.lead_body("loc-1"))
    assert created.status_code == 201
    lead_id = created.json()["lead_id"]
    assert created.headers["Location"] == f"/v1/leads/{lead_id}"
    assert http.get(f"{base}{created.headers['Location']}").json()["lead_id"] == lead_id

    recorded = http.post(
        f"{base}/v1/activities",
        json={
            "subscription_id": str(tenant.subscription_id),
            "external_id": "call-1",
            "channel": "call",
            "direction": "outbound",
            "lead_id": lead_id,
            "occurred_at": "2026-01-01T09:00:00+00:00",
        },
    )
    assert recorded.status_code == 201
    # No single activity has a URL: the 201 names the timeline that lists it.
    assert recorded.headers["Location"] == f"/v1/leads/{lead_id}/timeline"
    listed = http.get(f"{base}{recorded.headers['Location']}").json()["items"]
    assert recorded.json()["activity_id"] in [item["activity_id"] for item in listed]


# -- X-Request-Id ------------------------------------------------------------------------------


def test_every_line_logged_for_a_request_names_its_request_id(
    tenant: Tenant, service, event_lines: EventLines
) -> None:
    """The access line was always written with it; the lead's own line is logged on a worker
    thread, deep in the handler, and carries it only through the bound context."""
    base, _ = service
    tenant.add_rep("ana@acme.test", "101")
    answer = client(tenant.key).post(
        f"{base}/v1/leads", json=tenant.lead_body("rid-1"), headers={"X-Request-Id": "form-7"}
    )
    assert answer.status_code == 201 and answer.headers["X-Request-Id"] == "form-7"
    assert event_lines.events("lead_created")[0]["request_id"] == "form-7"
    assert event_lines.events("http_request")[0]["request_id"] == "form-7"
    generated = client(tenant.key).get(f"{base}/v1/leads", headers={"X-Request-Id": "x" * 65})
    request_id = generated.headers["X-Request-Id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)  # too long: replaced, not echoed
    assert event_lines.events("http_request")[1]["request_id"] == request_id


# -- RateLimit ---------------------------------------------------------------------------------


def test_every_v1_answer_says_its_budgets(tenant: Tenant, database_url: str) -> None:
    settings = intake_settings(database_url, requests_per_minute=3, auth_failures_per_minute=5)
    tenant.add_rep("ana@acme.test", "101")
    with serving(settings) as (base, _):
        http = client(tenant.key)
        answers = [http.get(f"{base}/v1/leads") for _ in range(3)]
        spent = http.get(f"{base}/v1/leads")
        unknown_path = http.get(f"{base}/v1/nothing-here")
        no_key = client(None).get(f"{base}/v1/leads")
        health = http.get(f"{base}/healthz")

    policies = {"api-key": {"q": 3, "w": 60}, "auth-failures": {"q": 5, "w": 60}}
    for answer in [*answers, spent, unknown_path, no_key]:
        assert structured_items(answer.headers["RateLimit-Policy"]) == policies
    remaining = [structured_items(a.headers["RateLimit"])["api-key"]["r"] for a in answers]
    assert remaining == [2, 1, 0]
    assert structured_items(answers[0].headers["RateLimit"])["api-key"]["t"] == 20  # 60 s / 3

    problem_of(spent, 429, "rate_limited")
    limit = structured_items(spent.headers["RateLimit"])["api-key"]
    assert limit["r"] == 0 and 1 <= limit["t"] <= 20
    assert int(spent.headers["Retry-After"]) == limit["t"]
    assert spent.json()["violated-policies"] == ["api-key"]

    # No key: the address's budget of failures, one spent.
    assert structured_items(no_key.headers["RateLimit"]) == {"auth-failures": {"r": 4, "t": 12}}
    # Nothing counted it (no such path): the address's budget as it stands.
    assert structured_items(unknown_path.headers["RateLimit"])["auth-failures"]["r"] == 5
    assert "RateLimit" not in health.headers and "RateLimit-Policy" not in health.headers


def test_refusals_say_the_budget_that_counted_them(tenant: Tenant, service) -> None:
    base, _ = service
    http = client(tenant.key)
    invalid = http.post(f"{base}/v1/leads", data=b"{not json")  # counted, then refused
    problem_of(invalid, 422, "invalid_request")
    assert structured_items(invalid.headers["RateLimit"])["api-key"]["r"] == 5_999
    # Refused by the router before any budget: the address's, as it stands.
    wrong_method = http.post(f"{base}/v1/leads/{uuid.uuid4()}")
    problem_of(wrong_method, 405, "method_not_allowed")
    assert "auth-failures" in structured_items(wrong_method.headers["RateLimit"])


# -- the document and its page -----------------------------------------------------------------


def test_every_operation_is_named_and_every_answer_has_its_schema() -> None:
    document = openapi_document()
    ids = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            ids.append(operation["operationId"])
            for status, answer in operation["responses"].items():
                content = answer.get("content", {})
                assert content, (path, method, status)
                if int(status) >= 400:
                    assert set(content) == {"application/problem+json"}, (path, method, status)
                if path.startswith("/v1/"):
                    assert {"RateLimit-Policy", "RateLimit", "X-Request-Id"} <= set(
                        answer["headers"]
                    ), (path, method, status)
            if path.startswith("/v1/") and operation.get("security") != []:
                assert "429" in operation["responses"] and "401" in operation["responses"]
    assert len(ids) == len(set(ids))
    created = document["paths"]["/v1/leads"]["post"]["responses"]["201"]
    assert {link["operationId"] for link in created["links"].values()} == {
        "getLead",
        "updateLead",
        "getLeadTimeline",
        "getWhatsAppWindow",
        "queueMessage",
        "recordActivity",
    }
    assert "Location" in created["headers"]
    lead = document["paths"]["/v1/leads/{lead_id}"]["get"]["responses"]["200"]
    assert lead["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/LeadViewOut"
    }


def test_the_reference_page_is_the_document_and_needs_nothing_from_elsewhere(service) -> None:
    base, _ = service
    page = requests.get(f"{base}/docs", timeout=5)
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
    for methods in openapi_document()["paths"].values():
        for operation in methods.values():
            assert f'id="{operation["operationId"]}"' in page.text
    assert 'id="problem-rate_limited"' in page.text  # what a 429's type points at
    assert "<script" not in page.text and "src=" not in page.text
