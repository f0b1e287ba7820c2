"""CRM objects read in batches (``POST /crm/v3/objects/{type}/batch/read``), what companies,
contacts and deals share, and written in batches by a unique property
(``POST /crm/v3/objects/{type}/batch/upsert``), what contacts, tasks and calls share, with
:class:`BatchWriteResult`, the per-input outcome of every batch write (upserts and
associations)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.transport import HubSpotTransport, results_of

BATCH_READ_SIZE = 100
BATCH_UPSERT_SIZE = 100
# The reason of an input HubSpot's answer names neither as written nor as failed.
NOT_IN_ANSWER = "not in HubSpot's answer"


@dataclass(frozen=True)
class CompanyBatch:
    """One ``batch/read`` answer: the companies found and the ids HubSpot says are missing."""

    companies: list[dict[str, Any]]
    missing_ids: list[str]
    status: int


@dataclass(frozen=True)
class ObjectUpsert:
    """One input of a ``batch/upsert``: the record whose ``id_property`` (``email``, or a
    property created with unique values) has the value ``id`` gets ``properties``; HubSpot
    creates it when no record has that value."""

    id_property: str
    id: str
    properties: Mapping[str, str]


@dataclass(frozen=True)
class BatchWriteResult:
    """What HubSpot made of each input of a batch write, every input in exactly one dict.

    ``ids``: input key -> the HubSpot id written (for an upsert the key is the input's ``id``
    as given and the value the record's id; for an association the key is ``"from:to"`` and
    the value the association type id). ``errors``: input key -> HubSpot's reason (its
    category and message), or :data:`NOT_IN_ANSWER`.
    """

    ids: dict[str, str]
    errors: dict[str, str]

    @property
    def ok(self) -> bool:
        """True when every input was written."""
        return not self.errors


def error_reason(error: Mapping[str, Any]) -> str:
    """One entry of a batch answer's ``errors`` as a short reason: category and message."""
    category = str(error.get("category") or "ERROR")
    message = str(error.get("message") or "").strip()
    return f"{category}: {message}"[:300] if message else category


def write_result(
    keys: Iterable[str],
    written: Mapping[str, str],
    failed: Mapping[str, str],
    unattributed: Sequence[str],
) -> BatchWriteResult:
    """The result over ``keys``: a failure wins over a write (the input is retried, which a
    batch write allows), an input in neither is :data:`NOT_IN_ANSWER`, with the reasons of
    the errors that named no input."""
    missing = NOT_IN_ANSWER
    if unattributed:
        missing += "; errors naming no input: " + " | ".join(unattributed)
    ids: dict[str, str] = {}
    errors: dict[str, str] = {}
    for key in keys:
        if key in failed:
            errors[key] = failed[key]
        elif key in written:
            ids[key] = written[key]
        else:
            errors[key] = missing
    return BatchWriteResult(ids=ids, errors=errors)


def _lookup_key(id_property: str, value: Any) -> tuple[str, str]:
    # HubSpot matches (and answers) email in lower case, whatever case it was sent in.
    text = str(value)
    return (id_property, text.strip().lower() if id_property == "email" else text)


def error_ids(body: dict[str, Any]) -> list[str]:
    """Record ids named by the ``errors`` of a 207 batch answer."""
    ids: list[str] = []
    for error in body.get("errors") or []:
        ids.extend(str(i) for i in ((error or {}).get("context") or {}).get("ids") or [])
    return ids


class ObjectBatchReads(HubSpotTransport):
    """``batch/read`` of any CRM object type."""

    def _batch_read(
        self,
        object_type: str,
        endpoint: str,
        ids: Sequence[str],
        properties: Sequence[str],
        properties_with_history: Sequence[str] = (),
    ) -> CompanyBatch:
        if len(ids) > BATCH_READ_SIZE:
            raise ValueError(f"batch/read takes at most {BATCH_READ_SIZE} ids")
        payload = {
            "inputs": [{"id": str(i)} for i in ids],
            "properties": list(properties),
            "propertiesWithHistory": list(properties_with_history),
        }
        status, body = self.request(
            "POST", f"/crm/v3/objects/{object_type}/batch/read", endpoint=endpoint, json=payload
        )
        results = results_of(body, "batch/read response has no 'results' list", endpoint=endpoint)
        missing = error_ids(body)
        found = {str(c.get("id")) for c in results if isinstance(c, dict)}
        missing.extend(i for i in map(str, ids) if i not in found and i not in missing)
        return CompanyBatch(companies=results, missing_ids=missing, status=status)


def _check_upserts(inputs: Sequence[ObjectUpsert]) -> None:
    if len(inputs) > BATCH_UPSERT_SIZE:
        raise ValueError(f"batch/upsert takes at most {BATCH_UPSERT_SIZE} inputs")
    seen: set[tuple[str, str]] = set()
    for n, item in enumerate(inputs, start=1):
        if not item.id_property or not isinstance(item.id, str) or not item.id.strip():
            raise ValueError(f"upsert input {n} needs an id_property and a non-empty id")
        if not all(isinstance(v, str) for v in item.properties.values()):
            raise ValueError(f"upsert input {n}: HubSpot takes property values as strings")
        key = _lookup_key(item.id_property, item.id)
        if key in seen:  # HubSpot refuses the whole batch for it
            raise ValueError(f"upsert input {n} repeats the {item.id_property} of another input")
        seen.add(key)


class ObjectBatchWrites(HubSpotTransport):
    """``batch/upsert`` of any CRM object type."""

    def _batch_upsert(
        self, object_type: str, endpoint: str, inputs: Sequence[ObjectUpsert]
    ) -> BatchWriteResult:
        _check_upserts(inputs)
        if not inputs:
            return BatchWriteResult(ids={}, errors={})
        payload = {
            "inputs": [
                {
                    "idProperty": item.id_property,
                    "id": item.id,
                    # Sent as a property too, so every answer names the input it belongs to.
                    "properties": dict(item.properties) | {item.id_property: item.id},
                }
                for item in inputs
            ]
        }
        _, body = self.request(
            "POST", f"/crm/v3/objects/{object_type}/batch/upsert", endpoint=endpoint, json=payload
        )
        results = results_of(body, "batch/upsert response has no 'results' list", endpoint=endpoint)
        by_lookup = {_lookup_key(i.id_property, i.id): i.id for i in inputs}
        id_properties = dict.fromkeys(i.id_property for i in inputs)
        written: dict[str, str] = {}
        for result in results:
            if not isinstance(result, dict) or result.get("id") is None:
                continue
            properties = result.get("properties") or {}
            for id_property in id_properties:
                value = properties.get(id_property)
                key = None if value is None else by_lookup.get(_lookup_key(id_property, value))
                if key is not None:
                    written[key] = str(result["id"])
        failed: dict[str, str] = {}
        unattributed: list[str] = []
        for error in body.get("errors") or []:
            if not isinstance(error, dict):
                continue
            named = [
                by_lookup.get(_lookup_key(p, i))
                for i in ((error.get("context") or {}).get("ids") or [])
                for p in id_properties
            ]
            keys = [k for k in named if k is not None]
            for key in keys:
                failed[key] = error_reason(error)
            if not keys:
                unattributed.append(error_reason(error))
        return write_result((i.id for i in inputs), written, failed, unattributed)
