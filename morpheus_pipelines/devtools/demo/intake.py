"""The intake service's share of the demo: serve it for a moment on loopback, post a few
leads (one of them delivered twice) and show who owns them (docs/leads.md)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from morpheus_pipelines.db.urls import libpq_url
from morpheus_pipelines.intake.app import IntakeSettings, create_app
from morpheus_pipelines.intake.server import create_api_key

LEADS = (
    ("web-form", "demo-lead-1", "mei.lim@demo-customer.example", "+65 9123 4001"),
    ("facebook-ads", "demo-lead-2", "kenji@demo-customer.example", "+81 90 1234 5678"),
    ("web-form", "demo-lead-3", "priya@demo-customer.example", "+91 98765 43210"),
)


@contextmanager
def serving_in_thread(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on a free loopback port in a thread; yields its base URL and
    stops it on exit (the demo and the tests)."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", access_log=False)
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


def _post(base: str, key: str, body: dict) -> tuple[int, dict, bool]:
    request = urllib.request.Request(
        f"{base}/v1/leads",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        replayed = answer.headers.get("Idempotent-Replayed") == "true"
        return answer.status, json.loads(answer.read()), replayed


def post_demo_leads(url: str, subscription_id: uuid.UUID) -> list[str]:
    """Lines describing each delivery and its answer."""
    _, key = create_api_key(url, subscription_id, "demo")
    lines = []
    app = create_app(IntakeSettings(database_url=url, listen_url=libpq_url(url), pool_size=2))
    with serving_in_thread(app) as base:
        deliveries = [*LEADS, LEADS[0]]  # the first form's webhook, retried
        for source, submission, email, phone in deliveries:
            body = {
                "subscription_id": str(subscription_id),
                "source": source,
                "source_submission_id": submission,
                "campaign_ids": [],
                "contact": {"email": email, "phone": phone},
            }
            started = time.perf_counter()
            status, answer, replayed = _post(base, key, body)
            took = (time.perf_counter() - started) * 1000
            owner = answer["owner"]["hubspot_owner_id"]
            lines.append(
                f"  {submission:<12} {status} {'replayed' if replayed else 'created ':<8} "
                f"lead {answer['lead_id'][:8]} owner {owner:<9} pool {answer['pool']:<8} "
                f"{took:5.1f} ms"
            )
    return lines
