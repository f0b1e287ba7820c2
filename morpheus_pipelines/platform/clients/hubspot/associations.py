"""Associations v4: the contacts records of any type are associated with
(``POST /crm/v4/associations/{type}/contacts/batch/read``), what engagements and deals share,
and the tasks and calls Morpheus writes linked to their contacts with HubSpot's default
association (``POST /crm/v4/associations/{from}/{to}/batch/associate/default``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from morpheus_pipelines.platform.clients.hubspot.objects import (
    BATCH_READ_SIZE,
    BatchWriteResult,
    error_reason,
    write_result,
)
from morpheus_pipelines.platform.clients.hubspot.transport import (
    HubSpotError,
    HubSpotTransport,
    results_of,
)

ASSOCIATION_BATCH_SIZE = 100


def _named_pairs(
    error: Mapping[str, Any], pairs: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """The pairs an error's context names: by from id, by to id, by both, or as ``from:to``."""
    context = error.get("context") or {}
    from_ids: set[str] = set()
    to_ids: set[str] = set()
    keys: set[str] = set()
    for name, values in context.items() if isinstance(context, Mapping) else ():
        found = {str(v) for v in values or ()} if isinstance(values, list) else set()
        if name.startswith("from"):
            from_ids |= found
        elif name.startswith("to"):
            to_ids |= found
        else:
            keys |= found
    return [
        (a, b)
        for a, b in pairs
        if f"{a}:{b}" in keys
        or (from_ids and to_ids and a in from_ids and b in to_ids)
        or (from_ids and not to_ids and a in from_ids)
        or (to_ids and not from_ids and b in to_ids)
    ]


class AssociationReads(HubSpotTransport):
    """The contacts records of any type are associated with."""

    def _read_associated_contacts(self, from_type: str, ids: Sequence[str]) -> dict[str, list[str]]:
        """The contacts each of ≤ 100 records of ``from_type`` is associated with, in HubSpot's
        order. HubSpot answers a limited number of one record's associations per call and a
        ``paging.next.after`` for the rest: those records are asked again from there, so a
        record with many contacts comes whole. Records without contacts are left out."""
        if len(ids) > BATCH_READ_SIZE:
            raise ValueError(f"associations batch/read takes at most {BATCH_READ_SIZE} ids")
        endpoint = "associations_batch_read"
        path = f"/crm/v4/associations/{from_type}/contacts/batch/read"
        found: dict[str, list[str]] = {}
        asked: list[dict[str, str]] = [{"id": str(i)} for i in ids]
        while asked:
            _, body = self.request("POST", path, endpoint=endpoint, json={"inputs": asked})
            results = results_of(
                body, "associations response has no 'results' list", endpoint=endpoint
            )
            cursors = {item["id"]: item.get("after") for item in asked}
            asked = []
            for item in results:
                if not isinstance(item, dict) or not isinstance(item.get("from"), dict):
                    continue
                record = str(item["from"]["id"])
                # toObjectId is typed a string; a number is read the same way.
                found.setdefault(record, []).extend(
                    str(to["toObjectId"]) for to in item.get("to") or ()
                )
                after = ((item.get("paging") or {}).get("next") or {}).get("after")
                if after:
                    if str(after) == cursors.get(record):
                        raise HubSpotError(
                            f"associations paging of {from_type} {record} did not advance",
                            endpoint=endpoint,
                        )
                    asked.append({"id": record, "after": str(after)})
        return found


class AssociationEndpoints(AssociationReads):
    """The association endpoints."""

    def associate_default(
        self, from_type: str, to_type: str, pairs: Sequence[tuple[str, str]]
    ) -> BatchWriteResult:
        """Associate ≤ 100 ``(from id, to id)`` pairs with HubSpot's default association
        type, e.g. ``associate_default("tasks", "contacts", [(task_id, contact_id)])``.
        Associating twice changes nothing, so a retried batch is harmless. Keys of the result
        are ``"from:to"``; a written pair's value is the association type id."""
        unique = list(dict.fromkeys((str(a), str(b)) for a, b in pairs))
        if len(unique) > ASSOCIATION_BATCH_SIZE:
            raise ValueError(f"associate/default takes at most {ASSOCIATION_BATCH_SIZE} pairs")
        if not all(a and b for a, b in unique):
            raise ValueError("every association pair needs a from id and a to id")
        if not unique:
            return BatchWriteResult(ids={}, errors={})
        endpoint = "associations_associate_default"
        _, body = self.request(
            "POST",
            f"/crm/v4/associations/{from_type}/{to_type}/batch/associate/default",
            endpoint=endpoint,
            json={"inputs": [{"from": {"id": a}, "to": {"id": b}} for a, b in unique]},
        )
        results = results_of(body, "associations response has no 'results' list", endpoint=endpoint)
        wanted = set(unique)
        written: dict[str, str] = {}
        for result in results:
            if not isinstance(result, dict):
                continue
            pair = (
                str((result.get("from") or {}).get("id")),
                str((result.get("to") or {}).get("id")),
            )
            # HubSpot also answers the reverse direction; only the pairs asked for count.
            if pair in wanted:
                spec = result.get("associationSpec") or {}
                written[f"{pair[0]}:{pair[1]}"] = str(spec.get("associationTypeId", ""))
        failed: dict[str, str] = {}
        unattributed: list[str] = []
        for error in body.get("errors") or []:
            if not isinstance(error, dict):
                continue
            named = _named_pairs(error, unique)
            for a, b in named:
                failed[f"{a}:{b}"] = error_reason(error)
            if not named:
                unattributed.append(error_reason(error))
        return write_result((f"{a}:{b}" for a, b in unique), written, failed, unattributed)
