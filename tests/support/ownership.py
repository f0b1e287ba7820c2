"""A subscription with reps, contacts and segment members, in the real warehouse and the
HubSpot emulator at once, for the ownership tests."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from morpheus_pipelines.crm.models import (
    Contact,
    FollowUpTask,
    ReengagementAssignment,
    ReengagementSegment,
    SalesRep,
    Subscription,
)
from morpheus_pipelines.crm.repositories.reengagement import ReengagementSegmentMemberRepository
from morpheus_pipelines.crm.steps.reengagement import (
    SegmentRun,
    SegmentSettings,
    WriteBackRun,
    assign_segment,
    write_back_pending,
)
from morpheus_pipelines.db.session import get_session
from morpheus_pipelines.devtools.emulators import HubSpotEmulator
from morpheus_pipelines.platform.clients.hubspot import HubSpotClient

TOKEN = "pat-na1-ownership-test"
UNASSIGNED_LIST = "9000"
CONTACT_LIST_TYPE = "0-1"

_members = ReengagementSegmentMemberRepository()


def portal() -> HubSpotEmulator:
    """An emulated portal with the unassigned list and the AI owner."""
    emulator = HubSpotEmulator(
        {
            "token": TOKEN,
            "owners": [{"id": "86817215", "email": "ai-dialer@morpheus.test", "firstName": "AI"}],
        }
    )
    emulator.set_list(UNASSIGNED_LIST, name="Unassigned re-engagement", object_type_id="0-1")
    return emulator


@dataclass
class World:
    """One subscription in the database and the emulator."""

    url: str
    hubspot: HubSpotEmulator
    subscription_id: uuid.UUID = field(default_factory=uuid.uuid4)
    _next_contact: int = 1000
    _next_event: int = 0

    def __post_init__(self) -> None:
        with get_session(self.url) as session:
            session.add(Subscription(id=self.subscription_id, name="Acme"))

    def sessions(self) -> Any:
        return get_session(self.url)

    def client(self, **options: Any) -> HubSpotClient:
        defaults: dict[str, Any] = {
            "read_timeout": 2.0,
            "connect_timeout": 2.0,
            "retry_count": 1,
            "requests_per_10s": 10_000,
            "max_backoff": 0.01,
        }
        return HubSpotClient(self.hubspot.base_url, TOKEN, **(defaults | options))

    def add_rep(
        self,
        email: str,
        owner_id: str | None,
        *,
        active: bool = True,
        nooks: str | None = None,
        list_id: str | None = "auto",
        in_hubspot: bool = True,
    ) -> int:
        """A rep row (and, by default, its HubSpot owner and its own contact list)."""
        if list_id == "auto":
            list_id = f"L{owner_id}" if owner_id else None
        if list_id:
            self.hubspot.set_list(list_id, name=f"{email} calls", object_type_id=CONTACT_LIST_TYPE)
        if in_hubspot and owner_id:
            owners = self.hubspot.to_data()["owners"]
            owners.append({"id": owner_id, "email": email, "archived": not active})
            self.hubspot.set_owners(owners)
        with get_session(self.url) as session:
            rep = SalesRep(
                subscriptionId=self.subscription_id,
                email=email,
                hubspotOwnerId=owner_id,
                nooksUserId=nooks,
                activeListId=list_id,
                isActive=active,
            )
            session.add(rep)
            session.flush()
            return rep.id

    def set_rep_active(self, rep_id: int, active: bool) -> None:
        with get_session(self.url) as session:
            session.get(SalesRep, rep_id).isActive = active

    def add_contact(self, owner: str | None = None, *, in_hubspot: bool = True) -> int:
        """A contact with a HubSpot id (stored in the emulator with the same owner)."""
        self._next_contact += 1
        hubspot_id = str(self._next_contact)
        if in_hubspot:
            self.hubspot.set_contact(hubspot_id, {"hubspot_owner_id": owner})
        with get_session(self.url) as session:
            contact = Contact(
                subscriptionId=self.subscription_id,
                email=f"person{hubspot_id}@customer.example",
                firstName="Pat",
                lastName=f"No{hubspot_id}",
                hubspotContactId=hubspot_id,
                hubspotOwnerId=owner,
            )
            session.add(contact)
            session.flush()
            return contact.id

    def add_member(
        self,
        segment: ReengagementSegment,
        contact_id: int,
        *,
        deal_owner: str | None = None,
        event_id: str | None = None,
    ) -> str:
        if event_id is None:
            self._next_event += 1
            event_id = f"event-{self._next_event}"
        with get_session(self.url) as session:
            _members.add_members(
                session,
                [
                    {
                        "subscriptionId": self.subscription_id,
                        "segment": segment,
                        "sourceEventId": event_id,
                        "contactId": contact_id,
                        "dealOwnerId": deal_owner,
                    }
                ],
            )
        return event_id

    def settings(self, **overrides: Any) -> SegmentSettings:
        values: dict[str, Any] = {
            "subscription_id": self.subscription_id,
            "unassigned_list_id": UNASSIGNED_LIST,
        }
        return SegmentSettings(**(values | overrides))

    def assign(self, segment: ReengagementSegment, **overrides: Any) -> SegmentRun:
        with self.client() as client:
            return assign_segment(self.sessions, segment, self.settings(**overrides), client)

    def write_back(self, **options: Any) -> WriteBackRun:
        with self.client(**options) as client:
            return write_back_pending(client, self.sessions, self.subscription_id)

    def run(self, segment: ReengagementSegment) -> SegmentRun:
        """Assign the segment, then write everything back."""
        result = self.assign(segment)
        self.write_back()
        return result

    # -- reading back -------------------------------------------------------------------------

    def assignment(self, contact_id: int) -> ReengagementAssignment:
        with get_session(self.url) as session:
            return session.scalars(
                select(ReengagementAssignment)
                .where(ReengagementAssignment.contactId == contact_id)
                .order_by(ReengagementAssignment.id.desc())
            ).first()

    def contact(self, contact_id: int) -> Contact:
        with get_session(self.url) as session:
            return session.get(Contact, contact_id)

    def hubspot_contact(self, contact_id: int) -> dict[str, Any]:
        return self.hubspot.contact(self.contact(contact_id).hubspotContactId)

    def tasks(self, contact_id: int | None = None) -> list[FollowUpTask]:
        with get_session(self.url) as session:
            statement = select(FollowUpTask).where(
                FollowUpTask.subscriptionId == self.subscription_id
            )
            if contact_id is not None:
                statement = statement.where(FollowUpTask.contactId == contact_id)
            return list(session.scalars(statement.order_by(FollowUpTask.id)))

    def count(self, model: Any) -> int:
        with get_session(self.url) as session:
            return session.scalar(
                select(func.count())
                .select_from(model)
                .where(model.subscriptionId == self.subscription_id)
            )

    def round_robin_counts(self) -> Counter[int]:
        with get_session(self.url) as session:
            rows = session.scalars(
                select(ReengagementAssignment.salesRepId).where(
                    ReengagementAssignment.subscriptionId == self.subscription_id,
                    ReengagementAssignment.roundRobin.is_(True),
                )
            )
            return Counter(rows)

    def list_members(self, list_id: str) -> list[str]:
        return self.hubspot.list_members(list_id)
