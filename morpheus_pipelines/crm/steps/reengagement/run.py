"""One re-engagement run of a subscription: the write-backs an earlier run left pending, every
segment in turn, the write-backs this run owes, then the fairness of the rotation and what is
still waiting."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from morpheus_pipelines.crm.rules.fairness import FairnessReport
from morpheus_pipelines.crm.rules.ownership import ReengagementSegment, WriteBackStatus
from morpheus_pipelines.crm.steps.reengagement.batch import SegmentSettings
from morpheus_pipelines.crm.steps.reengagement.reports import fairness_report, write_back_counts
from morpheus_pipelines.crm.steps.reengagement.segments import SegmentRun, assign_segment
from morpheus_pipelines.crm.steps.reengagement.write_back import WriteBackRun, write_back_pending
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient


@dataclass(frozen=True)
class ReengagementRun:
    """What a run of the subscription did: the earlier write-backs completed, each segment's
    run, this run's write-backs, the fairness report and the write-back states left behind."""

    subscription_id: uuid.UUID
    earlier: WriteBackRun
    segments: list[SegmentRun]
    written: WriteBackRun
    fairness: FairnessReport
    write_back_status: dict[str, int]

    @property
    def aborted(self) -> dict[str, str]:
        return {run.segment.value: run.aborted for run in self.segments if run.aborted}

    @property
    def owner_read_errors(self) -> dict[str, str]:
        return {run.segment.value: run.error for run in self.segments if run.error}

    @property
    def error(self) -> str | None:
        """The write-back error still standing: this run's, else an earlier run's that this
        run did not get past."""
        return self.written.error or (self.earlier.error if not self.written.written else None)

    @property
    def pending(self) -> int:
        return self.write_back_status.get(WriteBackStatus.PENDING, 0)


def run_reengagement(
    client: HubSpotClient,
    session_factory: SessionFactory,
    settings: SegmentSettings,
    *,
    fairness_window: timedelta,
    run_id: str | None = None,
    log: Any | None = None,
) -> ReengagementRun:
    """Every segment of ``settings.subscription_id`` once, with the write-backs around them.
    Re-running assigns nobody twice."""
    subscription_id = settings.subscription_id
    earlier = write_back_pending(client, session_factory, subscription_id)
    segments = [
        assign_segment(session_factory, segment, settings, client, log=log)
        for segment in ReengagementSegment
    ]
    written = write_back_pending(client, session_factory, subscription_id)
    return ReengagementRun(
        subscription_id=subscription_id,
        earlier=earlier,
        segments=segments,
        written=written,
        fairness=fairness_report(
            session_factory, subscription_id, window=fairness_window, run_id=run_id
        ),
        write_back_status=write_back_counts(session_factory, subscription_id),
    )
