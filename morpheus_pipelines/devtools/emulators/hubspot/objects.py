"""Writing CRM objects by a unique property: ``POST /crm/v3/objects/{contacts|tasks|calls}/
batch/upsert``.

Each input names ``idProperty`` (``email`` for contacts, or a property created with
``hasUniqueValue``) and its value ``id``: the record holding that value is updated, else one
is created. The batch is refused as a whole (400, nothing written) as HubSpot refuses it: more
than 100 inputs, an input without ``id``/``idProperty``/``properties``, a key that is not a
unique property of the object, the same record twice, a property value that is not a string,
an option a property does not have, a task or call created without ``hs_timestamp``, a
``morpheus_*`` property the portal has not created, or a unique value another record holds.
``email`` is matched case-insensitively and stored in lower case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._faults import Fault, FaultKind
from .._messages import Request, Response, iso_now
from .params import MAX_BATCH_INPUTS, _BadRequest
from .portal import OBJECT_TYPE_IDS, Portal, batch_error
from .search import millis

UPSERT_TYPES = ("contacts", "tasks", "calls")
# Options of the enumeration properties Morpheus writes (HubSpot refuses any other value).
_OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "tasks": {
        "hs_task_status": ("NOT_STARTED", "IN_PROGRESS", "WAITING", "COMPLETED", "DEFERRED"),
        "hs_task_priority": ("NONE", "LOW", "MEDIUM", "HIGH"),
        "hs_task_type": ("CALL", "EMAIL", "TODO"),
    },
    "calls": {
        "hs_call_direction": ("INBOUND", "OUTBOUND"),
        "hs_call_status": (
            "BUSY",
            "CALLING_CRM_USER",
            "CANCELED",
            "COMPLETED",
            "CONNECTING",
            "FAILED",
            "IN_PROGRESS",
            "NO_ANSWER",
            "QUEUED",
            "RINGING",
        ),
    },
}
# Engagements cannot be created without the moment they happen (or, for a task, are due).
_REQUIRED_ON_CREATE = {"tasks": ("hs_timestamp",), "calls": ("hs_timestamp",)}
_LABELS = {"contacts": "contact", "tasks": "task", "calls": "call"}


def _normalize_key(id_property: str, value: str) -> str:
    return value.strip().lower() if id_property == "email" else value


def _invalid_values(problems: list[dict[str, str]]) -> _BadRequest:
    # HubSpot lists each invalid value as a JSON object inside its message.
    return _BadRequest(f"Property values were not valid: {json.dumps(problems)}")


class _Input:
    """One validated upsert input: its key as sent and normalised, and its properties."""

    def __init__(self, position: int, id_property: str, sent: str, props: dict[str, str]):
        self.position = position
        self.id_property = id_property
        self.sent = sent
        self.key = _normalize_key(id_property, sent)
        self.properties = props


def _upsert_inputs(
    request: Request, object_type: str, unique: set[str], defined: Mapping[str, Any]
) -> list[_Input]:
    try:
        payload = request.json
    except ValueError as exc:
        raise _BadRequest(f"Invalid input JSON: {exc}") from exc
    if not isinstance(payload, dict) or not isinstance(payload.get("inputs"), list):
        raise _BadRequest("Invalid input JSON: 'inputs' must be an array")
    raw_inputs = payload["inputs"]
    if len(raw_inputs) > MAX_BATCH_INPUTS:
        raise _BadRequest(
            f"Batch input size {len(raw_inputs)} exceeds the limit of {MAX_BATCH_INPUTS} inputs"
        )
    parsed: list[_Input] = []
    seen: set[tuple[str, str]] = set()
    for position, item in enumerate(raw_inputs, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
            raise _BadRequest("Invalid input JSON: every input needs an 'id' string")
        id_property = item.get("idProperty")
        if not isinstance(id_property, str) or not id_property:
            raise _BadRequest("Invalid input JSON: every upsert input needs an 'idProperty'")
        if id_property not in unique:
            raise _BadRequest(
                f"Unable to perform update/upsert by non-unique {OBJECT_TYPE_IDS[object_type]} "
                f"property {id_property}"
            )
        properties = item.get("properties")
        if not isinstance(properties, dict) or not all(
            isinstance(v, str) for v in properties.values()
        ):
            raise _BadRequest("Invalid input JSON: 'properties' must map names to strings")
        entry = _Input(position, id_property, item["id"], dict(properties))
        own = entry.properties.get(id_property)
        if own is not None and _normalize_key(id_property, own) != entry.key:
            raise _BadRequest(
                f"Invalid input JSON: property {id_property} differs from the input's id"
            )
        if (id_property, entry.key) in seen:  # HubSpot refuses the same record twice
            raise _BadRequest(f"Duplicate IDs found in batch input: [{entry.sent}]")
        seen.add((id_property, entry.key))
        _check_values(object_type, entry.properties, defined)
        parsed.append(entry)
    return parsed


def _check_values(object_type: str, properties: dict[str, str], defined: Mapping[str, Any]) -> None:
    problems = []
    for name, value in properties.items():
        options = _OPTIONS.get(object_type, {}).get(name)
        if options is not None and value not in options:
            problems.append(
                {
                    "isValid": False,
                    "message": f"{value} was not one of the allowed options: {list(options)}",
                    "error": "INVALID_OPTION",
                    "name": name,
                }
            )
        if name == "hs_timestamp" and value:
            try:
                millis(value)
            except _BadRequest:
                problems.append(
                    {
                        "isValid": False,
                        "message": f"{value} is not a valid datetime: epoch milliseconds or "
                        "ISO 8601",
                        "error": "INVALID_DATETIME",
                        "name": name,
                    }
                )
        # HubSpot's own properties are not modelled; Morpheus's must have been created.
        if name.startswith("morpheus_") and name not in defined:
            problems.append(
                {
                    "isValid": False,
                    "message": f'Property "{name}" does not exist',
                    "error": "PROPERTY_DOESNT_EXIST",
                    "name": name,
                }
            )
    if problems:
        raise _invalid_values(problems)


def _failed_by_fault(fault: Fault | None, inputs: list[_Input]) -> set[int]:
    """Positions of the inputs a PARTIAL_FAILURE fault fails: those it names (by key) and every
    k-th; with neither, the first."""
    if fault is None or fault.kind is not FaultKind.PARTIAL_FAILURE:
        return set()
    named = {_normalize_key(i.id_property, k) for i in inputs for k in fault.ids or ()}
    failed = {i.position for i in inputs if i.key in named}
    if fault.every is not None:
        failed |= {i.position for i in inputs if i.position % fault.every == 0}
    if fault.ids is None and fault.every is None and inputs:
        failed.add(inputs[0].position)
    return failed


class ObjectWriteEndpoints(Portal):
    """The ``contacts_batch_upsert``, ``tasks_batch_upsert`` and ``calls_batch_upsert``
    endpoints."""

    def _object_store(self, object_type: str) -> dict[str, dict[str, Any]]:
        if object_type == "contacts":
            return self._contacts
        return self._engagements.setdefault(object_type, {})

    def _handle_batch_upsert(self, request: Request, fault: Fault | None) -> Response:
        started = iso_now()
        object_type = request.params["object_type"]
        with self._lock:
            unique = self.unique_properties(object_type)
            defined = dict(self._properties.get(object_type, {}))
            inputs = _upsert_inputs(request, object_type, unique, defined)
            store = self._object_store(object_type)
            targets = self._resolve(object_type, store, inputs, unique)
            failed = _failed_by_fault(fault, inputs)
            results = [
                self._write(object_type, store, entry, targets[entry.position])
                for entry in inputs
                if entry.position not in failed
            ]
        body: dict[str, Any] = {
            "status": "COMPLETE",
            "results": results,
            "startedAt": started,
            "completedAt": iso_now(),
        }
        if not failed:
            return Response(200, body)
        label = _LABELS[object_type]
        body["numErrors"] = 1
        body["errors"] = [
            batch_error(
                "VALIDATION_ERROR",
                f"Could not write some {label} objects; the other inputs were written.",
                [entry.sent for entry in inputs if entry.position in failed],
            )
        ]
        return Response(207, body)

    def _resolve(
        self,
        object_type: str,
        store: dict[str, dict[str, Any]],
        inputs: list[_Input],
        unique: set[str],
    ) -> dict[int, str | None]:
        """The existing record each input updates (None: it creates one); 400 before anything
        is written when a new record lacks a required property or a unique value is taken."""
        holders: dict[tuple[str, str], str] = {}
        for record_id, record in store.items():
            if record.get("archived"):
                continue
            for name in unique:
                value = record["properties"].get(name)
                if value:
                    holders[(name, _normalize_key(name, value))] = record_id
        targets: dict[int, str | None] = {}
        for entry in inputs:
            target = holders.get((entry.id_property, entry.key))
            if target is not None and target.startswith("new:"):
                # Another input of this batch creates that record: the same record twice.
                raise _BadRequest(f"Duplicate IDs found in batch input: [{entry.sent}]")
            if target is None:
                missing = [
                    name
                    for name in _REQUIRED_ON_CREATE.get(object_type, ())
                    if not entry.properties.get(name)
                ]
                if missing:
                    raise _BadRequest(
                        f"Cannot create a {_LABELS[object_type]} without {', '.join(missing)} "
                        f"(input {entry.position})"
                    )
            owner = target or f"new:{entry.position}"
            claims = {entry.id_property: entry.key} | {
                name: _normalize_key(name, value)
                for name, value in entry.properties.items()
                if name in unique and value
            }
            for name, value in claims.items():
                holder = holders.setdefault((name, value), owner)
                if holder != owner:
                    raise _invalid_values(
                        [
                            {
                                "isValid": False,
                                "message": f"Another {_LABELS[object_type]} already has this "
                                f"value of the unique property {name}",
                                "error": "UNIQUE_VALUE_TAKEN",
                                "name": name,
                            }
                        ]
                    )
            targets[entry.position] = target
        return targets

    def _write(
        self,
        object_type: str,
        store: dict[str, dict[str, Any]],
        entry: _Input,
        target: str | None,
    ) -> dict[str, Any]:
        now = iso_now()
        created = target is None
        record_id = self.new_object_id(store) if target is None else target
        if created:
            store[record_id] = {"properties": {}, "createdAt": now, "writes": 0}
            if object_type == "contacts":
                store[record_id] |= {"updatedAt": now, "archived": False}
        record = store[record_id]
        values = entry.properties | {entry.id_property: entry.key}
        if values.get("email"):
            values["email"] = _normalize_key("email", values["email"])
        # An empty string clears a property, as the spec says.
        record["properties"].update({k: (v if v != "" else None) for k, v in values.items()})
        record["properties"]["hs_object_id"] = record_id
        record["writes"] = record.get("writes", 0) + 1
        if object_type == "contacts":
            record["properties"].setdefault("createdate", record["createdAt"])
            record["properties"]["lastmodifieddate"] = now
            record["updatedAt"] = now
            updated = now
        else:
            record["properties"].setdefault("hs_createdate", record["createdAt"])
            updated = self._touch(record)
        modified = "lastmodifieddate" if object_type == "contacts" else "hs_lastmodifieddate"
        shown = [*values, "hs_object_id", modified]
        return {
            "id": record_id,
            "properties": {name: record["properties"].get(name) or "" for name in shown},
            "createdAt": record["createdAt"],
            "updatedAt": updated,
            "archived": False,
            "new": created,
        }
