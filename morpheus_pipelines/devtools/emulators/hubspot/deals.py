"""Deals: ``POST /crm/v3/objects/deals/batch/read`` (also ``/crm/v3/objects/0-3/batch/read``,
as deals.json spells it), and the store behind the deals search, which :mod:`.search` serves;
a deal's contacts live in the portal's associations (:mod:`.associations`).

A deal keeps each property's history, newest first, so a batch read answers
``propertiesWithHistory`` as HubSpot does (``value``, ``timestamp``, ``sourceType``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .._faults import Fault
from .._messages import Request, Response, iso_now
from .params import _BadRequest, batch_read_request
from .portal import Portal, _to_hubspot_value, batch_response, hubspot_stamp

# Always returned by a batch read, requested or not.
_ALWAYS_PROPERTIES = ("createdate", "hs_lastmodifieddate", "hs_object_id")
# Returned when a batch read asks for no properties at all (deals.json's table).
_DEFAULT_PROPERTIES = ("dealname", "amount", "closedate", "pipeline", "dealstage")
DEFAULT_PIPELINE = "default"


def _history_requested(request: Request) -> list[str]:
    names = request.json["propertiesWithHistory"]  # batch_read_request checked it is a list
    if not all(isinstance(name, str) for name in names):
        raise _BadRequest("Invalid input JSON: 'propertiesWithHistory' must list names")
    return list(names)


class DealEndpoints(Portal):
    """The ``deals_batch_read`` endpoint and the test methods that store and change deals."""

    def _handle_deals_batch_read(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        ids, requested = batch_read_request(request)
        with_history = _history_requested(request)
        wanted = list(dict.fromkeys([*(requested or _DEFAULT_PROPERTIES), *_ALWAYS_PROPERTIES]))
        results, missing = [], []
        with self._lock:
            for deal_id in ids:
                deal = self._deals.get(deal_id)
                if deal is None:
                    missing.append(deal_id)
                    continue
                result = {
                    "id": deal_id,
                    "properties": {name: deal["properties"].get(name) for name in wanted},
                    "createdAt": deal["createdAt"],
                    "updatedAt": deal["properties"]["hs_lastmodifieddate"],
                    "archived": False,
                }
                if with_history:
                    result["propertiesWithHistory"] = {
                        name: copy.deepcopy(deal["history"].get(name, [])) for name in with_history
                    }
                results.append(result)
        return batch_response(started, results, missing, "DEAL")

    # -- test methods ------------------------------------------------------------------------

    def add_deal(
        self,
        deal_id: str | int,
        *,
        stage: str = "appointmentscheduled",
        pipeline: str = DEFAULT_PIPELINE,
        owner_id: str | None = None,
        amount: str | float | None = None,
        name: str | None = None,
        contact_ids: Sequence[str | int] = (),
        modified_at: datetime | None = None,
    ) -> None:
        """Create (or replace) a deal associated with ``contact_ids``, last modified at
        ``modified_at`` (now by default)."""
        stamp = hubspot_stamp(modified_at)
        deal_id = str(deal_id)
        values = {
            "dealname": name or f"Deal {deal_id}",
            "dealstage": stage,
            "pipeline": pipeline,
            "hubspot_owner_id": owner_id,
            "amount": _to_hubspot_value(amount),
        }
        with self._lock:
            self._deals[deal_id] = {
                "properties": values
                | {"createdate": stamp, "hs_lastmodifieddate": stamp, "hs_object_id": deal_id},
                "createdAt": stamp,
                "history": {
                    name: [{"value": value, "timestamp": stamp, "sourceType": "CRM_UI"}]
                    for name, value in values.items()
                    if value is not None
                },
            }
            self.dissociate_all("deals", deal_id, "contacts")
            for contact_id in contact_ids:
                self.associate("deals", deal_id, "contacts", str(contact_id))

    def set_deal_property(
        self, deal_id: str | int, name: str, value: Any, *, modified_at: datetime | None = None
    ) -> None:
        """Change one property of a deal as a person in HubSpot would: its history gains the
        value and ``hs_lastmodifieddate`` moves to ``modified_at`` (now by default)."""
        stamp = hubspot_stamp(modified_at)
        text = _to_hubspot_value(value)
        with self._lock:
            deal = self._deals[str(deal_id)]
            deal["properties"][name] = text
            deal["properties"]["hs_lastmodifieddate"] = stamp
            deal["history"].setdefault(name, []).insert(
                0, {"value": text or "", "timestamp": stamp, "sourceType": "CRM_UI"}
            )

    def set_deal_stage(
        self, deal_id: str | int, stage: str, *, modified_at: datetime | None = None
    ) -> None:
        """Move a deal to ``stage`` (``closedwon``, ``closedlost``, …) at ``modified_at``."""
        self.set_deal_property(deal_id, "dealstage", stage, modified_at=modified_at)

    def deal(self, deal_id: str | int) -> dict[str, Any] | None:
        """A copy of one stored deal (``properties``, ``history``), or None; its contacts are
        ``associations("deals", "contacts")``."""
        with self._lock:
            return copy.deepcopy(self._deals.get(str(deal_id)))
