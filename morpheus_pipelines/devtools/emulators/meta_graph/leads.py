"""Lead Ads: the leads the emulated Graph knows and ``GET /{version}/{leadgen_id}``.

A lead is stored as the Graph node serves it: ``id``, ``created_time`` (``2026-07-01T08:49:14
+0000``), ``ad_id`` (absent for an organic lead), ``form_id`` and ``field_data``, a list of
``{"name", "values": [...]}``. Without ``fields=`` Graph answers the node's default fields
(``created_time``, ``id``, ``field_data``); ``ad_id`` and ``form_id`` must be asked for.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .._messages import Request, Response
from .errors import graph_error, nonexisting_object

__all__ = ["DEFAULT_LEAD_FIELDS", "LEAD_FIELDS", "LeadEndpoints", "graph_time"]

LEAD_FIELDS = ("id", "created_time", "ad_id", "form_id", "field_data", "is_organic", "platform")
DEFAULT_LEAD_FIELDS = ("created_time", "id", "field_data")

FieldData = Mapping[str, str | Sequence[str]] | Sequence[Mapping[str, Any]]


def graph_time(moment: datetime) -> str:
    """``moment`` as Graph writes a datetime field: ``2026-07-01T08:49:14+0000``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


def _field_data(raw: FieldData) -> list[dict[str, Any]]:
    if isinstance(raw, Mapping):
        items = [{"name": name, "values": values} for name, values in raw.items()]
    else:
        items = [dict(item) for item in raw]
    out = []
    for item in items:
        values = item.get("values")
        if isinstance(values, str):
            values = [values]
        out.append({"name": str(item["name"]), "values": [str(v) for v in values or []]})
    return out


class LeadEndpoints:
    """The lead store and the lead retrieval endpoint (a mixin of the emulator)."""

    _lock: threading.RLock
    _leads: dict[str, dict[str, Any]]
    _lead_pages: dict[str, str]
    _now: Callable[[], datetime]

    def add_lead(
        self,
        leadgen_id: str,
        *,
        page_id: str,
        form_id: str,
        field_data: FieldData,
        ad_id: str | None = None,
        created_time: datetime | None = None,
        platform: str = "fb",
    ) -> dict[str, Any]:
        """Store a lead (replacing one with the same id); returns it as Graph serves it with
        every field. ``field_data`` is ``{"email": "a@x.com", ...}`` (a value may be a list)
        or Graph's own ``[{"name", "values"}]``; ``ad_id=None`` makes an organic lead."""
        lead: dict[str, Any] = {
            "id": str(leadgen_id),
            "created_time": graph_time(created_time or self._now()),
            "form_id": str(form_id),
            "field_data": _field_data(field_data),
            "is_organic": ad_id is None,
            "platform": platform,
        }
        if ad_id is not None:
            lead["ad_id"] = str(ad_id)
        with self._lock:
            self._leads[lead["id"]] = lead
            self._lead_pages[lead["id"]] = str(page_id)
        return copy.deepcopy(lead)

    def lead(self, leadgen_id: str) -> dict[str, Any] | None:
        """The stored lead with every field, or None."""
        with self._lock:
            found = self._leads.get(str(leadgen_id))
            return copy.deepcopy(found) if found is not None else None

    def remove_lead(self, leadgen_id: str) -> None:
        """Forget a lead (Graph then answers it as a nonexisting object)."""
        with self._lock:
            self._leads.pop(str(leadgen_id), None)
            self._lead_pages.pop(str(leadgen_id), None)

    def _handle_lead(self, request: Request) -> Response:
        object_id = request.params["object_id"]
        with self._lock:
            lead = copy.deepcopy(self._leads.get(object_id))
        if lead is None:
            return nonexisting_object(object_id, "GET")
        requested = request.query.get("fields")
        if requested is None:
            names = list(DEFAULT_LEAD_FIELDS)
        else:
            names = [name.strip() for name in requested.split(",") if name.strip()]
            for name in names:
                if name not in LEAD_FIELDS:
                    message = f"(#100) Tried accessing nonexisting field ({name}) on node type"
                    return Response(400, graph_error(f"{message} (Lead)", code=100))
            if "id" not in names:
                names.append("id")  # Graph always answers the id
        return Response(200, {name: lead[name] for name in names if name in lead})
