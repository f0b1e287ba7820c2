"""The re-engagement segments: ownership block, follow-up task, list enrolment and the
HubSpot write-back (docs/ownership.md).

A segment is processed in batches (:mod:`.segments`). Each batch is one transaction
(:mod:`.batch`) that

1. takes the subscription's rotation lock (so "does this contact already have a task?" and
   the reservation cannot race another batch of the same subscription),
2. claims up to ``batch_size`` new members,
3. skips contacts with live work (``has_active_task_for_contact``) and, for email clicks,
   contacts a human rep called in the last few days,
4. applies the ownership block (one round-robin reservation for the batch),
5. creates the follow-up tasks, updates the local contact, records every outcome with the
   HubSpot write-back it owes (``pending``), and commits.

The HubSpot half (:mod:`.write_back`: contacts ``batch/update`` of ``hubspot_owner_id`` /
``call_assigned_to``, ``memberships/add`` on the rep's list) runs after the commit, ≤ 100
contacts per call. A failure leaves the write-backs ``pending`` with the reason; the next run
completes them first. So no task ever exists without either its write-back or a recorded
pending write-back. What the runs leave behind, the fairness of the rotation and the work
still waiting, is read by :mod:`.reports`.
"""

from morpheus_pipelines.crm.steps.reengagement.batch import (
    DEFAULT_BATCH_SIZE,
    FOLLOW_UP_DUE_AFTER,
    HUMAN_CALL_SUPPRESSES_FOR,
    SegmentSettings,
)
from morpheus_pipelines.crm.steps.reengagement.reports import (
    Backlog,
    backlog,
    fairness_report,
    write_back_counts,
)
from morpheus_pipelines.crm.steps.reengagement.segments import SegmentRun, assign_segment
from morpheus_pipelines.crm.steps.reengagement.write_back import (
    MAX_WRITE_BACK_ATTEMPTS,
    WriteBackRun,
    write_back_pending,
)

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "FOLLOW_UP_DUE_AFTER",
    "HUMAN_CALL_SUPPRESSES_FOR",
    "MAX_WRITE_BACK_ATTEMPTS",
    "Backlog",
    "SegmentRun",
    "SegmentSettings",
    "WriteBackRun",
    "assign_segment",
    "backlog",
    "fairness_report",
    "write_back_counts",
    "write_back_pending",
]
