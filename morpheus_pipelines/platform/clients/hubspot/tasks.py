"""Tasks: the follow-ups Morpheus writes for reps, keyed by its intent key, and read back by
modification time to learn which ones reps completed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.objects import (
    BatchWriteResult,
    ObjectBatchWrites,
    ObjectUpsert,
)
from morpheus_pipelines.platform.clients.hubspot.search import ObjectSearch, since_millis

# What Morpheus writes on a task (and reads back); hs_task_status is NOT_STARTED or COMPLETED.
TASK_PROPERTIES = (
    "hs_task_subject",
    "hs_task_body",
    "hs_timestamp",
    "hubspot_owner_id",
    "hs_task_status",
    "hs_task_type",
    "hs_task_priority",
)


class TaskEndpoints(ObjectBatchWrites, ObjectSearch):
    """The task endpoints."""

    def batch_upsert_tasks(self, inputs: Sequence[ObjectUpsert]) -> BatchWriteResult:
        """``POST /crm/v3/objects/tasks/batch/upsert`` for ≤ 100 tasks, each keyed by its
        ``morpheus_intent_key`` (``id_property``): sending the same task again updates it,
        so a retried batch creates nothing twice. A new task needs ``hs_timestamp`` (its due
        time, epoch milliseconds or ISO 8601)."""
        return self._batch_upsert("tasks", "tasks_batch_upsert", inputs)

    def iter_tasks_modified_since(
        self, since: datetime, properties: Sequence[str]
    ) -> Iterator[list[dict[str, Any]]]:
        """Every task modified at or after ``since`` (timezone-aware), oldest modification
        first, a page at a time (``POST /crm/v3/objects/tasks/search``); past HubSpot's
        10,000-result cap a new query starts from the last modification time seen, so tasks
        at that moment may come twice."""
        return self._iter_modified_since(
            "tasks",
            modified_property="hs_lastmodifieddate",
            since_ms=since_millis(since),
            properties=properties,
            endpoint="tasks_search",
        )
