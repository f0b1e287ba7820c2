"""Task completion coming back from HubSpot (docs/hubspot-outbox.md, "Tasks completed in
HubSpot"): the HubSpot tasks modified since the watermark, minus an overlap, and every one a
rep completed there completes its follow-up task here, so escalation never chases a task that
is done and the re-engagement guard lets the contact be worked again.

Only tasks the outbox wrote are ours (``follow_up_tasks.hubspotTaskId``); others are read and
ignored. The watermark moves only after a complete read, as the engagement sync's does.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from morpheus_pipelines.crm.repositories.follow_up_task import complete_from_hubspot
from morpheus_pipelines.crm.rules.hubspot_engagements import hubspot_time
from morpheus_pipelines.crm.rules.watermarks import window_start
from morpheus_pipelines.crm.steps.watermarks import move_watermark, read_watermark
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient

OVERLAP = timedelta(hours=1)
FIRST_RUN_LOOKBACK = timedelta(days=30)
TASK_PROPERTIES = ("hs_task_status", "hs_lastmodifieddate")


def watermark_key(subscription_id: uuid.UUID) -> str:
    return f"hubspot_task_sync_watermark:{subscription_id}"


@dataclass(frozen=True)
class TaskSync:
    window_start: datetime
    read: int
    completed_in_hubspot: int
    completed_here: int
    watermark: datetime | None

    def as_metadata(self) -> dict[str, object]:
        return {
            "window_start": self.window_start,
            "read": self.read,
            "completed_in_hubspot": self.completed_in_hubspot,
            "completed_here": self.completed_here,
            "watermark": self.watermark,
        }


def sync_task_completions(
    client: HubSpotClient,
    session_factory: SessionFactory,
    subscription_id: uuid.UUID,
    *,
    now: datetime | None = None,
) -> TaskSync:
    """Complete the follow-up tasks whose HubSpot task was completed since the watermark."""
    now = now or datetime.now(UTC)
    key = watermark_key(subscription_id)
    previous = read_watermark(session_factory, key)
    start = window_start(previous, now=now, overlap=OVERLAP, first_run_lookback=FIRST_RUN_LOOKBACK)
    newest, read, completed, changed = previous, 0, 0, 0
    for page in client.iter_tasks_modified_since(start, TASK_PROPERTIES):
        done = []
        for task in page:
            properties = task.get("properties") or {}
            read += 1
            if properties.get("hs_task_status") == "COMPLETED":
                done.append(str(task["id"]))
            modified = hubspot_time(properties.get("hs_lastmodifieddate"))
            if modified and (newest is None or modified > newest):
                newest = modified
        completed += len(done)
        with session_factory() as session:
            changed += complete_from_hubspot(session, subscription_id, done)
    newest = move_watermark(session_factory, key, previous, newest, subscription_id)
    return TaskSync(start, read, completed, changed, newest)
