"""A re-engagement segment's run: its new members, batch after batch, each batch its own
transaction (:mod:`.batch`), until none is left or a batch cannot go on."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from morpheus_pipelines.crm.models import ReengagementSegment
from morpheus_pipelines.crm.rules.ownership import NoRepAvailable
from morpheus_pipelines.crm.steps.reengagement.batch import (
    BatchAborted,
    SegmentSettings,
    assign_batch,
)
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory
from morpheus_pipelines.platform.clients.hubspot import (
    BATCH_UPDATE_SIZE,
    HubSpotClient,
    HubSpotError,
)
from morpheus_pipelines.platform.observability.events import log_event


@dataclass
class SegmentRun:
    """What one segment's run did."""

    segment: ReengagementSegment
    batches: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    aborted: str | None = None  # the reason, when a batch was aborted (campaign target)
    aborted_batches: int = 0  # rolled back; the run went on with the batches after them
    error: str | None = None  # HubSpot could not say who owns the contacts: members wait

    @property
    def processed(self) -> int:
        return sum(self.outcomes.values())


def assign_segment(
    session_factory: SessionFactory,
    segment: ReengagementSegment,
    settings: SegmentSettings,
    client: HubSpotClient,
    *,
    log: Any | None = None,
) -> SegmentRun:
    """Process every new member of ``segment``, one transaction per batch. A campaign-target
    batch with nobody to assign is rolled back whole (its members stay new for the next run)
    and the run goes on with the batches after it: members a real owner keeps are still
    enrolled. A batch whose owners HubSpot could not be asked for stops the run."""
    if not 1 <= settings.batch_size <= BATCH_UPDATE_SIZE:
        raise ValueError(f"batch_size must be 1..{BATCH_UPDATE_SIZE}, got {settings.batch_size}")
    run = SegmentRun(segment)
    after: int | None = None  # past the aborted batches of this run
    while True:
        try:
            with session_factory() as session:
                outcomes = assign_batch(
                    CrmStore(session), segment, settings, client, after_member_id=after
                )
        except HubSpotError as exc:
            _owners_unreadable(run, settings, exc)
            return run
        except BatchAborted as exc:
            _batch_aborted(run, settings, exc, log)
            after = exc.last_member_id
            continue
        if not outcomes:
            return run
        run.batches += 1
        run.outcomes.update(outcomes)
        log_event(
            "reengagement_batch_committed",
            segment=segment.value,
            subscription_id=str(settings.subscription_id),
            batch=run.batches,
            **outcomes,
        )


def _owners_unreadable(run: SegmentRun, settings: SegmentSettings, exc: HubSpotError) -> None:
    """HubSpot could not say who owns the batch's contacts: the members wait for the next
    run."""
    run.error = str(exc)
    log_event(
        "reengagement_owner_read_failed",
        level=logging.WARNING,
        segment=run.segment.value,
        subscription_id=str(settings.subscription_id),
        error=str(exc),
    )


def _batch_aborted(
    run: SegmentRun, settings: SegmentSettings, exc: NoRepAvailable, log: Any | None
) -> None:
    """The segment aborts its batch when nobody can be assigned (campaign target)."""
    run.aborted = str(exc)
    run.aborted_batches += 1
    log_event(
        "reengagement_batch_aborted",
        level=logging.ERROR,
        segment=run.segment.value,
        subscription_id=str(settings.subscription_id),
        reason=str(exc),
    )
    if log is not None:
        log.error(f"{run.segment.value}: {exc}")
