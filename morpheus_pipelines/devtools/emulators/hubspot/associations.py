"""Associations v4, one store for every object type (:meth:`~.portal.Portal.associations`):
``POST /crm/v4/associations/{type}/contacts/batch/read``, the contacts records of a type are
associated with, and ``POST /crm/v4/associations/{fromObjectType}/{toObjectType}/batch/
associate/default``, the default (unlabelled) association between records.

A read answers ``toObjectId`` as a string (associations.json's type) and at most 500
associations of one record per call, with a ``paging.next.after`` cursor that the next
request gives back in the input (``{"id", "after"}``), as HubSpot pages a record's
associations. It sees every association however it was made: by ``associate/default`` (a task
Morpheus's outbox links to its contact), by ``set_engagement(contact_ids=)`` or by
``add_deal(contact_ids=)``.

Associating is idempotent: a pair already associated is answered like a new one. Every
association is stored both ways, and HubSpot's answer names both directions. An id that is
not a record of its type fails that input (207, the error's context naming it as
``fromObjectId`` or ``toObjectId``); the others are associated.
"""

from __future__ import annotations

from typing import Any

from .._faults import Fault, FaultKind
from .._messages import Request, Response, iso_now
from .params import MAX_BATCH_INPUTS, _BadRequest, _sort_key
from .portal import Portal
from .search import object_type

# HubSpot's default association type ids (category HUBSPOT_DEFINED) between the engagements
# and contacts, both directions.
DEFAULT_ASSOCIATION_TYPES = {
    ("contacts", "calls"): 193,
    ("calls", "contacts"): 194,
    ("contacts", "emails"): 197,
    ("emails", "contacts"): 198,
    ("contacts", "meetings"): 199,
    ("meetings", "contacts"): 200,
    ("contacts", "notes"): 201,
    ("notes", "contacts"): 202,
    ("contacts", "tasks"): 203,
    ("tasks", "contacts"): 204,
}
MAX_ASSOCIATION_INPUTS = 2000
MAX_ASSOCIATIONS_PAGE = 500


def _pairs(request: Request) -> list[tuple[str, str]]:
    try:
        payload = request.json
    except ValueError as exc:
        raise _BadRequest(f"Invalid input JSON: {exc}") from exc
    if not isinstance(payload, dict) or not isinstance(payload.get("inputs"), list):
        raise _BadRequest("Invalid input JSON: 'inputs' must be an array")
    if len(payload["inputs"]) > MAX_ASSOCIATION_INPUTS:
        raise _BadRequest(
            f"Batch input size {len(payload['inputs'])} exceeds the limit of "
            f"{MAX_ASSOCIATION_INPUTS} inputs"
        )
    pairs = []
    for item in payload["inputs"]:
        ends = [item.get(side) if isinstance(item, dict) else None for side in ("from", "to")]
        ids = [end.get("id") if isinstance(end, dict) else None for end in ends]
        if not all(isinstance(i, str) and i for i in ids):
            raise _BadRequest("Invalid input JSON: every input needs 'from' and 'to' ids")
        pairs.append((ids[0], ids[1]))
    return list(dict.fromkeys(pairs))


def _error(message: str, context: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "status": "error",
        "category": "VALIDATION_ERROR",
        "message": message,
        "context": context,
        "errors": [],
        "links": {},
    }


def _spec(type_id: int) -> dict[str, Any]:
    return {"associationCategory": "HUBSPOT_DEFINED", "associationTypeId": type_id}


def _read_inputs(request: Request) -> list[tuple[str, int]]:
    """``(id, offset)`` of each input of an association read."""
    try:
        inputs = request.json.get("inputs")
    except (ValueError, AttributeError) as exc:
        raise _BadRequest(f"Invalid input JSON: {exc}") from exc
    if not isinstance(inputs, list) or len(inputs) > MAX_BATCH_INPUTS:
        raise _BadRequest(f"'inputs' must be an array of at most {MAX_BATCH_INPUTS}")
    parsed = []
    for item in inputs:
        if not isinstance(item, dict) or item.get("id") in (None, ""):
            raise _BadRequest("Invalid input JSON: every input needs an 'id'")
        after = str(item.get("after") or "0")
        if not after.isdigit():
            raise _BadRequest(f"after must be a number, got {after!r}")
        parsed.append((str(item["id"]), int(after)))
    return parsed


def _to_page(to_ids: list[str], offset: int) -> dict[str, Any]:
    page = to_ids[offset : offset + MAX_ASSOCIATIONS_PAGE]
    answer: dict[str, Any] = {
        "to": [
            {
                # A string, as associations.json types it (clients should take a number too).
                "toObjectId": to_id,
                "associationTypes": [{"category": "HUBSPOT_DEFINED", "typeId": 0}],
            }
            for to_id in page
        ]
    }
    if offset + MAX_ASSOCIATIONS_PAGE < len(to_ids):
        answer["paging"] = {"next": {"after": str(offset + MAX_ASSOCIATIONS_PAGE)}}
    return answer


class AssociationEndpoints(Portal):
    """The ``associations_batch_read`` and ``associations_associate_default`` endpoints."""

    def _handle_associations_batch_read(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        from_type = object_type(request.params["object_type"])
        inputs = _read_inputs(request)
        results = []
        with self._lock:
            records = self._records_of(from_type)
            linked = self._associations.get((from_type, "contacts"), {})
            for record_id, offset in inputs:
                contact_ids = sorted(linked.get(record_id, ()), key=_sort_key)
                if record_id not in records or not contact_ids:
                    continue
                results.append({"from": {"id": record_id}} | _to_page(contact_ids, offset))
        return Response(
            200,
            {
                "status": "COMPLETE",
                "results": results,
                "startedAt": started,
                "completedAt": iso_now(),
            },
        )

    def _handle_associate_default(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        from_type, to_type = request.params["from_type"], request.params["to_type"]
        forward = DEFAULT_ASSOCIATION_TYPES.get((from_type, to_type))
        if forward is None:
            raise _BadRequest(f"There is no default association from {from_type} to {to_type}")
        reverse = DEFAULT_ASSOCIATION_TYPES[(to_type, from_type)]
        pairs = _pairs(request)
        injected: list[tuple[str, str]] = []
        if fault is not None and fault.kind is FaultKind.PARTIAL_FAILURE:
            named = set(fault.ids or ())
            injected = [
                (a, b)
                for n, (a, b) in enumerate(pairs, start=1)
                if f"{a}:{b}" in named
                or (fault.every is not None and n % fault.every == 0)
                or (fault.ids is None and fault.every is None and n == 1)
            ]
        results: list[dict[str, Any]] = []
        with self._lock:
            sources, targets = self._records_of(from_type), self._records_of(to_type)
            bad_from = sorted({a for a, _ in pairs if a not in sources})
            bad_to = sorted({b for _, b in pairs if b not in targets})
            for a, b in pairs:
                if a in bad_from or b in bad_to or (a, b) in injected:
                    continue
                self.associate(from_type, a, to_type, b)
                results.append(
                    {"from": {"id": a}, "to": {"id": b}, "associationSpec": _spec(forward)}
                )
                results.append(
                    {"from": {"id": b}, "to": {"id": a}, "associationSpec": _spec(reverse)}
                )
        errors = []
        if bad_from:
            errors.append(
                _error(f"No {from_type} exist with ids {bad_from}", {"fromObjectId": bad_from})
            )
        if bad_to:
            errors.append(_error(f"No {to_type} exist with ids {bad_to}", {"toObjectId": bad_to}))
        errors += [
            _error(
                f"Could not associate {from_type} {a} with {to_type} {b}",
                {"fromObjectId": [a], "toObjectId": [b]},
            )
            for a, b in injected
        ]
        body: dict[str, Any] = {
            "status": "COMPLETE",
            "results": results,
            "startedAt": started,
            "completedAt": iso_now(),
        }
        if not errors:
            return Response(200, body)
        body |= {"numErrors": len(errors), "errors": errors}
        return Response(207, body)
