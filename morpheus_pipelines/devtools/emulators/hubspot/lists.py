"""The Lists API: ``GET /crm/v3/lists/{listId}`` and its ``/memberships`` pages, lists created
(``POST /crm/v3/lists``) and found by name, and memberships changed (``PUT .../memberships/add``,
``PUT .../memberships/add-and-remove``) or cleared (``DELETE .../memberships``)."""

from __future__ import annotations

import bisect
from typing import Any

from .._faults import Fault, FaultKind
from .._messages import Request, Response, iso_now
from .params import (
    _BadRequest,
    _decode_cursor,
    _decode_or_400,
    _encode_cursor,
    _int_param,
    _sort_key,
)
from .portal import CONTACT_OBJECT_TYPE_ID, OBJECT_TYPE_IDS, Portal, _normalize_list

MAX_MEMBERSHIP_LIMIT = 250
# Record ids one add-and-remove request may name (adds and removes together).
MAX_MEMBERSHIP_CHANGE = 100_000
# HubSpot removes all members at once only from lists smaller than this.
MAX_CLEARABLE_MEMBERS = 100_000
# Lists whose membership the API may change; DYNAMIC lists are filter-driven.
_WRITABLE_PROCESSING_TYPES = ("MANUAL", "SNAPSHOT")
_PROCESSING_TYPES = ("MANUAL", "SNAPSHOT", "DYNAMIC")


class ListEndpoints(Portal):
    """The ``list`` and ``memberships`` endpoints."""

    def _handle_list(self, request: Request, fault: Fault | None) -> Response:
        list_id = request.params["list_id"]
        with self._lock:
            lst = self._lists.get(list_id)
            if lst is None:
                return Response(404, self.error_body(404, f"List {list_id} does not exist."))
            body = self._list_definition(list_id, lst)
        if fault is not None and fault.kind is FaultKind.LIST_SIZE:
            body["size"] = body["size"] + 1 if fault.list_size is None else fault.list_size
        if fault is not None and fault.kind is FaultKind.PROCESSING_STATUS:
            body["processingStatus"] = fault.processing_status
        # Real responses also carry the size here, as a string.
        body["additionalProperties"] = {
            "hs_list_size": str(body["size"]),
            "hs_last_record_added_at": body["updatedAt"],
        }
        return Response(200, {"list": body})

    def _membership_window(self, request: Request) -> tuple[int, int, list[str]]:
        """(start index, limit, sorted ids) of an ``after``-paged memberships request."""
        limit = _int_param(request.query, "limit", 100, 1, MAX_MEMBERSHIP_LIMIT)
        ids, keys = self._sorted_member_ids(request.params["list_id"])
        after = request.query.get("after")
        if not after:
            return 0, limit, ids
        try:
            cursor = _decode_cursor(after)
        except ValueError as exc:
            raise _BadRequest(str(exc)) from exc
        return bisect.bisect_right(keys, _sort_key(cursor)), limit, ids

    def _sorted_member_ids(self, list_id: str) -> tuple[list[str], list[tuple[int, int, str]]]:
        """Member ids in HubSpot's order and their sort keys, cached per membership version."""
        with self._lock:
            cached = self._sorted_members.get(list_id)
            if cached is not None and cached[0] == self._members_version:
                return cached[1], cached[2]
            lst = self._lists.get(list_id)
            ids = sorted(lst["members"], key=_sort_key) if lst is not None else []
            keys = [_sort_key(i) for i in ids]
            self._sorted_members[list_id] = (self._members_version, ids, keys)
            return ids, keys

    def _handle_memberships(self, request: Request, fault: Fault | None) -> Response:
        list_id = request.params["list_id"]
        with self._lock:
            lst = self._lists.get(list_id)
            if lst is None:
                return Response(404, self.error_body(404, f"List {list_id} does not exist."))
            timestamps = lst["members"]
        before = request.query.get("before")
        paging: dict[str, Any] = {}
        if before and not request.query.get("after"):
            # ``before`` pages backwards in descending order; ``after`` wins when both are set.
            limit = _int_param(request.query, "limit", 100, 1, MAX_MEMBERSHIP_LIMIT)
            ids, keys = self._sorted_member_ids(list_id)
            end = bisect.bisect_left(keys, _sort_key(_decode_or_400(before)))
            page_ids = list(reversed(ids[max(0, end - limit) : end]))
            if end - limit > 0 and page_ids:
                paging["prev"] = {"before": _encode_cursor(page_ids[-1])}
        else:
            start, limit, ids = self._membership_window(request)
            page_ids = ids[start : start + limit]
            if start + limit < len(ids):
                paging["next"] = {"after": _encode_cursor(page_ids[-1])}
            if fault is not None and fault.kind is FaultKind.DUPLICATE_MEMBERS and page_ids:
                if start > 0:
                    page_ids.insert(0, ids[start - 1])
                else:
                    page_ids.append(page_ids[0])
        with self._lock:
            results = [{"recordId": i, "membershipTimestamp": timestamps.get(i)} for i in page_ids]
        body: dict[str, Any] = {"results": results}
        if paging:
            body["paging"] = paging
        return Response(200, body)

    def _list_definition(self, list_id: str, lst: dict[str, Any]) -> dict[str, Any]:
        """A stored list as a PublicObjectList."""
        size = len(lst["members"]) if lst["size"] is None else lst["size"]
        body = {k: lst[k] for k in ("name", "processingType", "objectTypeId", "listVersion")}
        return body | {
            "listId": list_id,
            "processingStatus": lst["processingStatus"],
            "size": size,
            "createdAt": lst["createdAt"],
            "updatedAt": lst["updatedAt"],
            "filtersUpdatedAt": lst["createdAt"],
            "createdById": "1",
            "updatedById": "1",
        }

    def _handle_list_create(self, request: Request, fault: Fault | None) -> Response:
        """``POST /crm/v3/lists``: a new list; a name another list has is refused (400)."""
        try:
            payload = request.json
        except ValueError as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise _BadRequest("Invalid input JSON: expected an object")
        for key in ("name", "objectTypeId", "processingType"):
            if not isinstance(payload.get(key), str) or not payload[key].strip():
                raise _BadRequest(f"Invalid input JSON: '{key}' is required")
        name, object_type_id = payload["name"], payload["objectTypeId"]
        processing_type = payload["processingType"]
        if processing_type not in _PROCESSING_TYPES:
            raise _BadRequest(f"processingType must be one of {list(_PROCESSING_TYPES)}")
        if processing_type == "DYNAMIC" and not payload.get("filterBranch"):
            raise _BadRequest("A DYNAMIC list needs a filterBranch")
        if object_type_id not in OBJECT_TYPE_IDS.values():
            raise _BadRequest(f"Unknown objectTypeId {object_type_id!r}")
        with self._lock:
            if any(lst["name"].lower() == name.lower() for lst in self._lists.values()):
                raise _BadRequest(f"A list named '{name}' already exists.")
            numeric = [int(i) for i in self._lists if i.isdigit()]
            list_id = str(max(numeric, default=0) + 1)
            self._members_version += 1
            lst = _normalize_list(
                list_id,
                {"name": name, "processingType": processing_type, "objectTypeId": object_type_id},
                iso_now(),
            )
            self._lists[list_id] = lst
            return Response(200, {"list": self._list_definition(list_id, lst)})

    def _handle_list_by_name(self, request: Request, fault: Fault | None) -> Response:
        """``GET /crm/v3/lists/object-type-id/{objectTypeId}/name/{listName}``."""
        name, object_type_id = request.params["list_name"], request.params["object_type_id"]
        with self._lock:
            for list_id, lst in self._lists.items():
                if lst["name"].lower() == name.lower() and lst["objectTypeId"] == object_type_id:
                    return Response(200, {"list": self._list_definition(list_id, lst)})
        return Response(
            404, self.error_body(404, f"List with name {name} and type {object_type_id} not found")
        )

    def _writable_list(self, list_id: str) -> dict[str, Any] | Response:
        """The stored list whose memberships a request may change, or the error answer."""
        lst = self._lists.get(list_id)
        if lst is None:
            return Response(404, self.error_body(404, f"List {list_id} does not exist."))
        if lst["processingType"] not in _WRITABLE_PROCESSING_TYPES:
            raise _BadRequest(
                f"List {list_id} is {lst['processingType']}; only MANUAL or SNAPSHOT "
                "lists accept membership changes"
            )
        return lst

    def _change_members(
        self, lst: dict[str, Any], add: list[str], remove: list[str]
    ) -> dict[str, list[str]]:
        """Add and remove records (under the lock): records that do not exist are reported
        missing, adding a member or removing a non-member changes nothing."""
        records = (
            self._contacts if lst["objectTypeId"] == CONTACT_OBJECT_TYPE_ID else self._companies
        )
        added, removed, missing = [], [], []
        for record_id in dict.fromkeys(add):
            if record_id not in records:
                missing.append(record_id)
            elif record_id not in lst["members"]:
                added.append(record_id)
        for record_id in dict.fromkeys(remove):
            if record_id not in records:
                missing.append(record_id)
            elif record_id in lst["members"] and record_id not in added:
                removed.append(record_id)
        if added or removed:
            self._members_version += 1
            now = iso_now()
            lst["members"].update(dict.fromkeys(added, now))
            for record_id in removed:
                lst["members"].pop(record_id)
            lst["updatedAt"] = now
        return {
            "recordIdsMissing": list(dict.fromkeys(missing)),
            "recordIdsRemoved": removed,
            "recordsIdsAdded": added,
        }

    def _handle_memberships_add(self, request: Request, fault: Fault | None) -> Response:
        """``PUT /crm/v3/lists/{listId}/memberships/add``: records that do not exist or are
        already members are ignored (reported as missing / not added), as HubSpot does."""
        try:
            record_ids = request.json
        except ValueError as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(record_ids, list) or not all(isinstance(i, str) for i in record_ids):
            raise _BadRequest("Invalid input JSON: expected an array of record id strings")
        with self._lock:
            lst = self._writable_list(request.params["list_id"])
            if isinstance(lst, Response):
                return lst
            return Response(200, self._change_members(lst, record_ids, []))

    def _handle_memberships_add_and_remove(self, request: Request, fault: Fault | None) -> Response:
        """``PUT /crm/v3/lists/{listId}/memberships/add-and-remove`` (MembershipChangeRequest:
        both arrays required, at most 100,000 ids between them)."""
        try:
            payload = request.json
        except ValueError as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise _BadRequest("Invalid input JSON: expected an object")
        for key in ("recordIdsToAdd", "recordIdsToRemove"):
            ids = payload.get(key)
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise _BadRequest(f"Invalid input JSON: '{key}' must be an array of id strings")
        add, remove = payload["recordIdsToAdd"], payload["recordIdsToRemove"]
        if len(add) + len(remove) > MAX_MEMBERSHIP_CHANGE:
            raise _BadRequest(
                f"A membership change may name at most {MAX_MEMBERSHIP_CHANGE} records, "
                f"got {len(add) + len(remove)}"
            )
        with self._lock:
            lst = self._writable_list(request.params["list_id"])
            if isinstance(lst, Response):
                return lst
            return Response(200, self._change_members(lst, add, remove))

    def _handle_memberships_clear(self, request: Request, fault: Fault | None) -> Response:
        """``DELETE /crm/v3/lists/{listId}/memberships``: every member removed, the list kept
        (204); lists of 100,000 members or more are refused, as HubSpot does."""
        list_id = request.params["list_id"]
        with self._lock:
            lst = self._writable_list(list_id)
            if isinstance(lst, Response):
                return lst
            if len(lst["members"]) >= MAX_CLEARABLE_MEMBERS:
                raise _BadRequest(
                    f"List {list_id} has {len(lst['members'])} members; removing all at once "
                    f"works on lists of fewer than {MAX_CLEARABLE_MEMBERS}"
                )
            if lst["members"]:
                self._members_version += 1
                lst["members"].clear()
                lst["updatedAt"] = iso_now()
        return Response(204)
