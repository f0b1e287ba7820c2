"""schemathesis against the live service, driven by the service's own ``/openapi.json``, with
every check it has and every phase: the document's examples, its coverage cases (each
boundary, each missing or wrong value, each method it does not list), random requests, and
the stateful phase, which follows the links of a created lead into every operation that takes
its id (docs/leads.md).

Every check is run as schemathesis ships it but two. ``negative_data_rejection`` also takes
``413`` as a rejection (a generated body over the size limit is refused unread).
``positive_data_acceptance`` (a
request the document allows must not be refused) is run with an exception, for the refusals
that no schema can say because they depend on what is stored or on the clock: a key or an
``external_id`` reused with another body, a WhatsApp window that is closed, an opted-out
address, a rep id that is not an active rep of the subscription, a time in the future; and
for the two the document can only say in part: an email email-validator refuses and a phone
number libphonenumber does not read as valid (a grammar and the world's numbering plans, which
no regular expression holds; the document's patterns are their shape, the libraries the rest,
and the subscription's default region decides whether a national number is one). Each is a
named ``error`` (or a named field, with the message its rule gives) of the problem the service
answers, and nothing else is forgiven: a schema-valid request refused for its shape fails the
test.
"""

from __future__ import annotations

import schemathesis
from schemathesis.engine import events, from_schema
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.support.intake import Tenant, intake_settings, serving

OK = {200, 201, 202}
# Refusals of schema-valid requests that depend on stored state or on the clock.
STATEFUL_ERRORS = {
    "idempotency_key_reused",
    "external_id_reused",
    "whatsapp_window_closed",
    "opted_out",
}
STATEFUL_FIELDS = {
    "owner.sales_rep_id": "not an active rep",  # another rep's id: a foreign key
    "occurred_at": "in the future",  # the clock
    # The libraries' refusals, prefixed with the field; pydantic's own (a pattern, a length)
    # are not, and are not forgiven.
    "contact.email": "contact.email: ",
    "contact.phone": "contact.phone: ",
}


def _refused_by_state(response) -> bool:
    if response.status_code != 422:
        return False
    try:
        body = response.json()
    except ValueError:
        return False
    if body.get("error") in STATEFUL_ERRORS:
        return True
    fields = body.get("fields") or []
    return bool(fields) and all(
        STATEFUL_FIELDS.get(item["field"], "\0") in item["message"] for item in fields
    )


@schemathesis.check
def positive_data_acceptance_but_state(ctx, response, case):
    """``positive_data_acceptance``, but for the refusals of :data:`STATEFUL_ERRORS` and
    :data:`STATEFUL_FIELDS`."""
    if _refused_by_state(response):
        return None
    return positive_data_acceptance(ctx, response, case)


def _failures(event: events.EngineEvent) -> list[str]:
    """Each failed check the event reports, with the exchange that failed it."""
    recorder = getattr(event, "recorder", None)
    if recorder is None:
        return []
    found = []
    for case_id, checks in recorder.checks.items():
        interaction = recorder.interactions.get(case_id)
        for check in checks:
            if check.status.name != "FAILURE":
                continue
            title = check.failure_info.failure.title if check.failure_info else ""
            exchange = ""
            if interaction is not None:
                request, response = interaction.request, interaction.response
                exchange = f"\n  {request.method} {request.uri}\n  {(request.body or b'')[:300]}"
                if response is not None:
                    exchange += f"\n  -> {response.status_code} {(response.content or b'')[:400]}"
            found.append(f"{check.name}: {title}{exchange}")
    return found


def _answers(event: events.EngineEvent) -> list[tuple[str, str, int]]:
    """``(phase, operation, status)`` of every exchange the event reports."""
    recorder = getattr(event, "recorder", None)
    phase = getattr(event, "phase", None)
    if recorder is None or phase is None:
        return []
    found = []
    for case_id, interaction in recorder.interactions.items():
        node = recorder.cases.get(case_id)
        label = node.value.operation.label if node else "?"
        if interaction.response is not None:
            found.append((str(phase.value), label, interaction.response.status_code))
    return found


def test_the_live_service_keeps_its_document(tenant: Tenant, database_url: str) -> None:
    tenant.add_rep("ana@acme.test", "101")
    # Budgets no run can spend: the checks are about the document, not the budgets.
    settings = intake_settings(
        database_url, requests_per_minute=10_000_000, auth_failures_per_minute=10_000_000
    )
    with serving(settings) as (base, _):
        config = schemathesis.Config.from_dict(
            {
                "base-url": base,
                "headers": {"Authorization": f"Bearer {tenant.key}"},
                # The key's own subscription, so a lead can be created and its links followed.
                "parameters": {"body.subscription_id": str(tenant.subscription_id)},
                "checks": {
                    "positive_data_acceptance": {"enabled": False},
                    # Schemathesis's own list, and 413: a generated body over the size limit
                    # is refused before it is read, which is a rejection too.
                    "negative_data_rejection": {
                        "expected-statuses": [
                            *("400", "401", "403", "404", "405", "406", "409", "413"),
                            *("415", "422", "428", "429", "5xx"),
                        ]
                    },
                },
                "phases": {
                    "examples": {"enabled": True},
                    "coverage": {"enabled": True},
                    "fuzzing": {"enabled": True},
                    "stateful": {"enabled": True, "max-steps": 20},
                },
                "generation": {"max-examples": 60},
                "seed": 37,
                "workers": 1,
                "suppress-health-check": ["all"],
            }
        )
        config.projects.override.checks.update(
            included_check_names=["all"], excluded_check_names=["positive_data_acceptance"]
        )
        schema = schemathesis.openapi.from_url(f"{base}/openapi.json", config=config)
        failures, errors = [], []
        answered: dict[tuple[str, str], set[int]] = {}
        for event in from_schema(schema).execute():
            failures += _failures(event)
            if isinstance(event, events.NonFatalError | events.FatalError):
                errors.append(str(getattr(event, "info", event)))
            for phase, label, status in _answers(event):
                answered.setdefault((phase, label), set()).add(status)
    assert not errors, "\n".join(errors)
    assert not failures, "\n\n".join(dict.fromkeys(failures))
    # The stateful phase followed a created lead into every operation that takes its id.
    reached = {
        label for (phase, label), got in answered.items() if phase == "stateful" and got & OK
    }
    assert reached >= {
        "POST /v1/leads",
        "GET /v1/leads/{lead_id}",
        "PATCH /v1/leads/{lead_id}",
        "GET /v1/leads/{lead_id}/timeline",
        "GET /v1/leads/{lead_id}/whatsapp-window",
        "POST /v1/activities",
        "POST /v1/messages",
    }, sorted(answered.items())
    # And the other phases ran too: the coverage phase's unlisted methods among them.
    assert {phase for phase, _ in answered} == {"examples", "coverage", "fuzzing", "stateful"}
    assert any(405 in got for (phase, _), got in answered.items() if phase == "coverage")
