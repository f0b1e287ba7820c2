"""The Contacts API: ``POST /crm/v3/objects/contacts/batch/update``."""

from __future__ import annotations

from typing import Any

from .._faults import Fault
from .._messages import Request, Response, iso_now
from .params import MAX_BATCH_INPUTS, _BadRequest, batch_read_request
from .portal import Portal, batch_response


def _update_inputs(request: Request) -> list[tuple[str, dict[str, str]]]:
    """``(id, properties)`` of each input, or 400 the way HubSpot rejects a malformed batch."""
    try:
        payload = request.json
    except ValueError as exc:
        raise _BadRequest(f"Invalid input JSON: {exc}") from exc
    if not isinstance(payload, dict) or not isinstance(payload.get("inputs"), list):
        raise _BadRequest("Invalid input JSON: 'inputs' must be an array")
    inputs = payload["inputs"]
    if len(inputs) > MAX_BATCH_INPUTS:
        raise _BadRequest(
            f"Batch input size {len(inputs)} exceeds the limit of {MAX_BATCH_INPUTS} inputs"
        )
    parsed: list[tuple[str, dict[str, str]]] = []
    seen: set[str] = set()
    for item in inputs:
        if not isinstance(item, dict) or item.get("id") in (None, ""):
            raise _BadRequest("Invalid input JSON: every input needs an 'id'")
        if item.get("idProperty") not in (None, "hs_object_id"):
            raise _BadRequest(f"idProperty {item['idProperty']!r} is not supported")
        properties = item.get("properties")
        if not isinstance(properties, dict) or not all(
            isinstance(v, str) for v in properties.values()
        ):
            raise _BadRequest("Invalid input JSON: 'properties' must map names to strings")
        record_id = str(item["id"])
        if record_id in seen:  # HubSpot refuses the same record twice in one batch
            raise _BadRequest(f"Duplicate IDs found in batch input: [{record_id}]")
        seen.add(record_id)
        parsed.append((record_id, {str(k): v for k, v in properties.items()}))
    return parsed


class ContactEndpoints(Portal):
    """The ``contacts_batch_update`` and ``contacts_batch_read`` endpoints."""

    def _handle_contacts_batch_read(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        ids, requested = batch_read_request(request)
        wanted = list(dict.fromkeys([*requested, "hs_object_id"]))
        results, missing = [], []
        with self._lock:
            for record_id in ids:
                contact = self._contacts.get(record_id)
                if contact is None or contact["archived"]:
                    missing.append(record_id)
                    continue
                properties = contact["properties"] | {"hs_object_id": record_id}
                results.append(
                    {
                        "id": record_id,
                        "properties": {name: properties.get(name) for name in wanted},
                        "createdAt": contact["createdAt"],
                        "updatedAt": contact["updatedAt"],
                        "archived": False,
                    }
                )
        return batch_response(started, results, missing, "CONTACT")

    def _handle_contacts_batch_update(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        inputs = _update_inputs(request)
        results: list[dict[str, Any]] = []
        missing: list[str] = []
        with self._lock:
            for record_id, properties in inputs:
                contact = self._contacts.get(record_id)
                if contact is None or contact["archived"]:
                    missing.append(record_id)
                    continue
                now = iso_now()
                # An empty string clears a property, as the spec says.
                contact["properties"].update(
                    {k: (v if v != "" else None) for k, v in properties.items()}
                )
                contact["properties"]["lastmodifieddate"] = now
                contact["updatedAt"] = now
                contact["writes"] += 1
                results.append(
                    {
                        "id": record_id,
                        "properties": {k: contact["properties"].get(k) or "" for k in properties}
                        | {"hs_object_id": record_id},
                        "createdAt": contact["createdAt"],
                        "updatedAt": now,
                        "archived": False,
                    }
                )
        return batch_response(started, results, missing, "CONTACT")
