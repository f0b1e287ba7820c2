"""Each rep's daily call list (docs/hubspot-outbox.md, "Call lists"): the HubSpot contacts of
the rep's pending call tasks due by the end of the day, queued for the rep's HubSpot list
(``sales_reps.hubspotCallSegmentId``; created when the rep has none). A rep who left gets an
empty list, once a day until it is empty.

Only queues: the outbox drain makes the HubSpot calls. One intent per rep and day, so
refreshing twice on a day queues once."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from morpheus_pipelines.crm.repositories.follow_up_task import (
    call_list_contacts,
    departed_reps_with_call_list,
)
from morpheus_pipelines.crm.rules.hubspot_outbox import OutboxKind, call_list_intent
from morpheus_pipelines.crm.store import CrmStore
from morpheus_pipelines.db.session import SessionFactory


@dataclass(frozen=True)
class CallListRefresh:
    day: date
    reps: int
    contacts: int
    emptied: int
    queued: int

    def as_metadata(self) -> dict[str, object]:
        return {
            "day": self.day.isoformat(),
            "reps": self.reps,
            "contacts": self.contacts,
            "emptied": self.emptied,
            "queued": self.queued,
        }


def refresh_call_lists(
    session_factory: SessionFactory, subscription_id: uuid.UUID, day: date, timezone: str
) -> CallListRefresh:
    """Queue the day's call list of every active rep and an empty one for every rep who left,
    in one transaction."""
    end_of_day = datetime.combine(day + timedelta(days=1), time(), tzinfo=ZoneInfo(timezone))
    queued = 0
    with session_factory() as session:
        store = CrmStore(session)
        lists = call_list_contacts(session, subscription_id, due_by=end_of_day)
        departed = departed_reps_with_call_list(session, subscription_id)
        wanted = lists | {rep_id: [] for rep_id in departed}
        for rep_id, contact_ids in wanted.items():
            queued += store.outbox.enqueue(
                session,
                subscription_id,
                OutboxKind.CALL_LIST,
                call_list_intent(rep_id, day.isoformat()),
                {"contact_ids": contact_ids},
                sales_rep_id=rep_id,
            )
    return CallListRefresh(
        day=day,
        reps=len(lists),
        contacts=sum(len(c) for c in lists.values()),
        emptied=len(departed),
        queued=queued,
    )
