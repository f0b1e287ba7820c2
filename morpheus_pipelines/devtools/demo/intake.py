"""The intake service's share of the demo: serve it for a moment on loopback, post a few
leads (one of them delivered twice) and show who owns them; then their timelines: a free-form
WhatsApp message refused because the window closed, and the automation sensor's evaluation
nudging the leads that went quiet but not the one who replied (docs/leads.md).

The service runs on a clock set 30 hours back while the leads arrive, so that "quiet for a
day" has happened by the time the demo ends."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import uvicorn

from morpheus_pipelines.crm.api.app import create_app
from morpheus_pipelines.crm.api.http_server import DEFAULT_LIMITS, ServerLimits, uvicorn_options
from morpheus_pipelines.crm.api.server import create_api_key
from morpheus_pipelines.crm.api.settings import IntakeSettings
from morpheus_pipelines.crm.repositories.timeline import AutomationRepository
from morpheus_pipelines.crm.rules.timeline import NudgeRule
from morpheus_pipelines.crm.steps.lead_automations import add_rule, fire_due_nudges
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.devtools.demo.messages import (
    DEMO_META_APP_SECRET,
    DEMO_WHATSAPP_RULE,
    add_whatsapp_rule,
    messages_leave,
    meta_emulator,
)
from morpheus_pipelines.devtools.emulators.meta_graph import DEFAULT_PHONE_NUMBER_ID

DEMO_RULE = "demo_quiet_day_email"
_automations = AutomationRepository()

LEADS = (
    ("web-form", "demo-lead-1", "mei.lim@demo-customer.example", "+65 9123 4001"),
    ("facebook-ads", "demo-lead-2", "kenji@demo-customer.example", "+81 90 1234 5678"),
    ("web-form", "demo-lead-3", "priya@demo-customer.example", "+91 98765 43210"),
)


@contextmanager
def serving_in_thread(app: Any, limits: ServerLimits = DEFAULT_LIMITS) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port in a thread, with the limits of
    ``morpheus serve``; yields its base URL and stops it on exit (the demo and the tests)."""
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", **uvicorn_options(limits)
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the intake service did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class _Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _call(
    base: str,
    key: str,
    method: str,
    path: str,
    body: dict | None = None,
    *,
    idempotency_key: str | None = None,
) -> Any:
    """``(status, answer, replayed)`` of one request; a 4xx is an answer, not an error."""
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    request = urllib.request.Request(
        f"{base}{path}",
        data=json.dumps(body).encode() if body is not None else None,
        headers=headers,
        method=method,
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            replayed = answer.headers.get("Idempotent-Replayed") == "true"
            return answer.status, json.loads(answer.read()), replayed
    except urllib.error.HTTPError as refused:
        return refused.code, json.loads(refused.read()), False


CrmLoop = Callable[[str, dict[str, str]], tuple[list[str], set[str]]]


def post_demo_leads(
    url: str,
    subscription_id: uuid.UUID,
    *,
    crm_loop: CrmLoop | None = None,
    hubspot_client_secret: str = "",
) -> list[str]:
    """Lines describing each delivery and its answer, then the timeline story; then
    ``crm_loop(base URL, lead ids)`` (the demo's HubSpot round trip: its lines and the
    submissions HubSpot unsubscribed), then the automations."""
    _, key = create_api_key(url, subscription_id, "demo")
    lines = []
    now = datetime.now(UTC).replace(microsecond=0)
    clock = _Clock(now - timedelta(hours=30))
    app = create_app(
        IntakeSettings(
            database_url=url,
            listen_url=libpq_url(url),
            pool_size=2,
            clock=clock,
            hubspot_client_secret=hubspot_client_secret,
            meta_app_secret=DEMO_META_APP_SECRET,
        )
    )
    lead_ids: dict[str, str] = {}
    # Each demo run sends new submissions (the database outlives the run); within the run the
    # first form's webhook is retried, and that is the one replayed.
    run = now.strftime("%Y%m%dT%H%M%S")
    with serving_in_thread(app) as base:
        deliveries = [*LEADS, LEADS[0]]
        for source, submission, email, phone in deliveries:
            body = {
                "subscription_id": str(subscription_id),
                "source": source,
                "source_submission_id": f"{submission}-{run}",
                "campaign_ids": [],
                "contact": {"email": email, "phone": phone},
            }
            started = time.perf_counter()
            status, answer, replayed = _call(base, key, "POST", "/v1/leads", body)
            took = (time.perf_counter() - started) * 1000
            # A lead nobody can take yet is answered with no owner: it waits, visibly.
            owner = (answer.get("owner") or {}).get("hubspot_owner_id") or answer["owner_state"]
            lead_ids[submission] = answer["lead_id"]
            lines.append(
                f"  {submission:<12} {status} {'replayed' if replayed else 'created ':<8} "
                f"lead {answer['lead_id'][:8]} owner {owner:<9} pool {answer['pool']:<8} "
                f"{took:5.1f} ms"
            )
        lines += _timeline_story(base, key, subscription_id, lead_ids, clock, now, run)
        unsubscribed: set[str] = set()
        if crm_loop is not None:
            loop_lines, unsubscribed = crm_loop(base, lead_ids)
            lines += loop_lines
        with meta_emulator(base) as meta:
            add_whatsapp_rule(url, subscription_id, DEFAULT_PHONE_NUMBER_ID)
            lines += _automation_story(url, subscription_id, lead_ids, now, unsubscribed)
            lines += messages_leave(url, meta, lead_ids)
    return lines


def _post_activity(
    base: str, key: str, subscription_id: uuid.UUID, lead_id: str, external_id: str, **fields: Any
) -> None:
    body = {
        "subscription_id": str(subscription_id),
        "external_id": external_id,
        "lead_id": lead_id,
        "direction": "inbound",
    } | fields
    _call(base, key, "POST", "/v1/activities", body)


def _timeline_story(
    base: str,
    key: str,
    subscription_id: uuid.UUID,
    lead_ids: dict[str, str],
    clock: _Clock,
    now: datetime,
    run: str,
) -> list[str]:
    kenji, priya = lead_ids["demo-lead-2"], lead_ids["demo-lead-3"]
    clock.now = now - timedelta(hours=29)
    _post_activity(
        base,
        key,
        subscription_id,
        kenji,
        f"wa-demo-{run}",
        channel="whatsapp",
        occurred_at=clock.now.isoformat(),
        body="Is the starter plan available in Japan?",
    )
    clock.now = now
    _post_activity(
        base,
        key,
        subscription_id,
        priya,
        f"mail-demo-{run}",
        channel="email",
        occurred_at=(now - timedelta(hours=2)).isoformat(),
        subject="Re: your demo request",
    )
    _, window, _ = _call(base, key, "GET", f"/v1/leads/{kenji}/whatsapp-window")
    message = {"lead_id": kenji, "channel": "whatsapp", "kind": "free_form", "body": "Hi Kenji!"}
    status, refused, _ = _call(
        base, key, "POST", "/v1/messages", message, idempotency_key="demo-message-1"
    )
    template = {"lead_id": kenji, "channel": "whatsapp", "kind": "template",
                "template_name": "follow_up_1"}  # fmt: skip
    template_status, _, _ = _call(
        base, key, "POST", "/v1/messages", template, idempotency_key="demo-message-2"
    )
    _, timeline, _ = _call(base, key, "GET", f"/v1/leads/{kenji}/timeline")
    channels = ", ".join(item["channel"] for item in timeline["items"])
    return [
        "",
        f"  demo-lead-2 timeline (newest first): {channels}",
        f"  demo-lead-2 WhatsApp window: open={window['open']}, closed at "
        f"{window['closes_at']} (24 h after their last WhatsApp message)",
        f"  free-form WhatsApp to demo-lead-2: {status} {refused.get('error')}, nothing queued;"
        f" an approved template instead: {template_status} "
        f"{'queued' if template_status == 202 else 'REFUSED'}",
    ]


def _automation_story(
    url: str,
    subscription_id: uuid.UUID,
    lead_ids: dict[str, str],
    now: datetime,
    unsubscribed: set[str],
) -> list[str]:
    with get_session(url) as session:
        if _automations.first_by(session, subscriptionId=subscription_id, name=DEMO_RULE) is None:
            add_rule(
                session,
                subscription_id,
                name=DEMO_RULE,
                rule=NudgeRule("email", timedelta(hours=24)),
                template_name="still_interested",
            )
    evaluation = fire_due_nudges(lambda: get_session(url), now)
    nudged = {
        str(firing.lead_id)
        for firing in evaluation.firings
        if evaluation.rules.get(firing.rule_id, {}).get("name") == DEMO_RULE
    }
    texted = {
        str(firing.lead_id)
        for firing in evaluation.firings
        if evaluation.rules.get(firing.rule_id, {}).get("name") == DEMO_WHATSAPP_RULE
    }
    why = {
        "demo-lead-1": "no inbound activity since the form, 30 h ago",
        "demo-lead-2": "quiet since their WhatsApp message, 29 h ago",
        "demo-lead-3": "replied by email 2 h ago",
    }
    lines = ["", "  automations on evidence (rule: email nudge after 24 h with no engagement):"]
    for submission, lead_id in lead_ids.items():
        verdict = "nudged    " if lead_id in nudged else "not nudged"
        reason = why[submission]
        if submission in unsubscribed and lead_id not in nudged:
            reason += "; but unsubscribed in HubSpot: no email goes to them"
        lines.append(f"    {submission:<12} {verdict} ({reason})")
    lines.append(
        "  and the WhatsApp rule (an approved template after 24 h with no engagement) nudged: "
        + (", ".join(s for s, lead_id in lead_ids.items() if lead_id in texted) or "nobody")
    )
    return lines
