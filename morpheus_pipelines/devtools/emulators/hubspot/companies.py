"""The Companies API: ``POST /crm/v3/objects/companies/batch/read``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._faults import Fault, FaultKind
from .._messages import Request, Response, iso_now
from .params import batch_read_request
from .portal import Portal, batch_response

# Always returned by a batch read, requested or not.
_ALWAYS_PROPERTIES = ("createdate", "hs_lastmodifieddate", "hs_object_id")
# Returned when a batch read asks for no properties at all.
_DEFAULT_PROPERTIES = ("createdate", "domain", "hs_lastmodifieddate", "hs_object_id", "name")


class CompanyEndpoints(Portal):
    """The ``batch_read`` endpoint."""

    def _handle_batch_read(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        ids, requested = batch_read_request(request)
        requested = requested or list(_DEFAULT_PROPERTIES)
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
