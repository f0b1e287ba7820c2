"""The Companies API: ``POST /crm/v3/objects/companies/batch/read``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._faults import Fault, FaultKind
from .._messages import Request, Response, iso_now
from .params import _BadRequest
from .portal import Portal, batch_response

MAX_BATCH_INPUTS = 100

# Always returned by a batch read, requested or not.
_ALWAYS_PROPERTIES = ("createdate", "hs_lastmodifieddate", "hs_object_id")
# Returned when a batch read asks for no properties at all.
_DEFAULT_PROPERTIES = ("createdate", "domain", "hs_lastmodifieddate", "hs_object_id", "name")


class CompanyEndpoints(Portal):
    """The ``batch_read`` endpoint."""

    def _handle_batch_read(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        try:
            payload = request.json
        except ValueError as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise _BadRequest("Invalid input JSON: expected an object")
        for key in ("inputs", "properties", "propertiesWithHistory"):
            if not isinstance(payload.get(key), list):
                raise _BadRequest(f"Invalid input JSON: '{key}' must be an array")
        inputs = payload["inputs"]
        if len(inputs) > MAX_BATCH_INPUTS:
            raise _BadRequest(
                f"Batch input size {len(inputs)} exceeds the limit of {MAX_BATCH_INPUTS} inputs"
            )
        id_property = payload.get("idProperty")
        if id_property not in (None, "hs_object_id"):
            raise _BadRequest(f"idProperty {id_property!r} is not supported by the emulator")
        ids: list[str] = []
        for item in inputs:
            if not isinstance(item, dict) or item.get("id") in (None, ""):
                raise _BadRequest("Invalid input JSON: every input needs an 'id'")
            if str(item["id"]) not in ids:  # HubSpot answers each id once
                ids.append(str(item["id"]))
        requested = [str(p) for p in payload["properties"]] or list(_DEFAULT_PROPERTIES)
        wanted = list(dict.fromkeys([*requested, *_ALWAYS_PROPERTIES]))
        dropped: set[str] = set()
        if fault is not None and fault.kind is FaultKind.MISSING_COMPANIES:
            dropped = set(fault.ids) if fault.ids is not None else set(ids[:1])

        results, missing = [], []
        with self._lock:
            for company_id in ids:
                company = self._companies.get(company_id)
                if company is None or company["archived"] or company_id in dropped:
                    missing.append(company_id)
                    continue
                results.append(self._company_object(company_id, company, wanted))
        return batch_response(started, results, missing, "COMPANY")

    def _company_object(
        self, company_id: str, company: Mapping[str, Any], wanted: list[str]
    ) -> dict[str, Any]:
        props: dict[str, str | None] = {}
        for name in wanted:
            value = company["properties"].get(name)
            if value is None and self.cleared_properties == "omit":
                continue
            props[name] = "" if value is None and self.cleared_properties == "empty" else value
        return {
            "id": company_id,
            "properties": props,
            "createdAt": company["createdAt"],
            "updatedAt": company["updatedAt"],
            "archived": False,
        }
