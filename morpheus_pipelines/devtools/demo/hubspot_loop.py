"""The demo's CRM loop (docs/hubspot-outbox.md, docs/hubspot-webhooks.md): what Morpheus
decided reaches the emulated HubSpot through the outbox, and HubSpot's webhook comes back.

After the demo's leads are posted, ``hubspot_outbox_job`` runs on the Dagster instance (as the
outbox sensor would launch it): the leads become HubSpot contacts owned by their owners, the
ownership run's follow-up tasks HubSpot tasks, its AI calls HubSpot calls. Then HubSpot tells
``morpheus serve``, by a signed webhook, that the first lead unsubscribed, and the email
automation that would have nudged that lead does not.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

from morpheus_pipelines.crm.models import Lead
from morpheus_pipelines.crm.steps.subscriptions import change_settings
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.devtools.emulators.hubspot import WebhookSender

DEMO_PORTAL_ID = 7_700_001
DEMO_CLIENT_SECRET = "demo-hubspot-app-client-secret"
WEBHOOK_PATH = "/v1/webhooks/hubspot"


def connect_portal(url: str, subscription_id: uuid.UUID) -> None:
    """The demo subscription answers for the demo portal's webhooks
    (`morpheus subscription set --hubspot-portal-id`)."""
    with get_session(url) as session:
        change_settings(session, subscription_id, {"--hubspot-portal-id": str(DEMO_PORTAL_ID)})


def drain_outbox_lines() -> list[str]:
    """Run ``hubspot_outbox_job`` in-process on the instance; one line of what it wrote."""
    import dagster as dg

    from morpheus_pipelines.definitions import defs

    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    with dg.DagsterInstance.get() as instance:
        result = defs.resolve_job_def("hubspot_outbox_job").execute_in_process(
            instance=instance, raise_on_error=False, run_config=quiet
        )
    [materialization] = result.asset_materializations_for_node("hubspot_outbox_delivery")
    written = materialization.metadata["written_by_kind"].value
    parts = ", ".join(f"{n} {kind}" for kind, n in sorted(written.items())) or "nothing"
    return [
        "",
        f"  hubspot_outbox_job {result.run_id[:8]} "
        f"{'succeeded' if result.success else 'FAILED'}: written to HubSpot {parts}",
    ]


def hubspot_lines(
    url: str, hubspot: HubSpotEmulator, lead_ids: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
    """Each demo lead as HubSpot holds it, and one follow-up task; the leads' HubSpot ids."""
    lines: list[str] = []
    contact_ids: dict[str, str] = {}
    with get_session(url) as session:
        for submission, lead_id in lead_ids.items():
            lead = session.get(Lead, uuid.UUID(lead_id))
            contact = hubspot.contact(lead.hubspotContactId) if lead.hubspotContactId else None
            if contact is None:
                lines.append(f"  {submission:<12} not in HubSpot yet")
                continue
            contact_ids[submission] = lead.hubspotContactId
            owner = contact["properties"].get("hubspot_owner_id")
            lines.append(
                f"  {submission:<12} HubSpot contact {lead.hubspotContactId:<6} "
                f"owner {owner:<9} (the lead's owner: {lead.ownerHubspotOwnerId})"
            )
    tasks = _follow_up_tasks(hubspot)
    if tasks:
        task_id, task = tasks[0]
        contacts = hubspot.associations("tasks", "contacts").get(task_id, set())
        lines.append(
            f"  {len(tasks)} follow-up tasks in HubSpot, e.g. task {task_id} "
            f"{task.get('hs_task_subject')!r} owner {task.get('hubspot_owner_id')} "
            f"on contact {', '.join(sorted(contacts)) or '-'}"
        )
    return lines, contact_ids


def _follow_up_tasks(hubspot: HubSpotEmulator) -> list[tuple[str, dict[str, Any]]]:
    return sorted(
        (task_id, task["properties"])
        for task_id, task in hubspot.tasks().items()
        if str(task["properties"].get("morpheus_intent_key", "")).startswith("task:")
    )


def opt_out_by_webhook(base: str, contact_id: str, submission: str) -> list[str]:
    """HubSpot's signed webhook: the contact unsubscribed (``hs_email_optout`` true)."""
    # Event ids HubSpot has not sent before: the demo's database outlives each run.
    sender = WebhookSender(
        f"{base}{WEBHOOK_PATH}",
        DEMO_CLIENT_SECRET,
        portal_id=DEMO_PORTAL_ID,
        first_event_id=time.time_ns() // 1000,
    )
    answer = sender.send([sender.property_change(int(contact_id), "hs_email_optout", "true")])
    return [
        f"  HubSpot webhook: {submission} unsubscribed (hs_email_optout=true) → "
        f"{answer.status_code} {answer.json().get('applied', '')} applied",
    ]
