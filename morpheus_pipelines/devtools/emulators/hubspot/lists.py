"""The Lists API: ``GET /crm/v3/lists/{listId}`` and its ``/memberships`` pages."""

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
from .portal import CONTACT_OBJECT_TYPE_ID, Portal

MAX_MEMBERSHIP_LIMIT = 250
# Lists whose membership the API may change; DYNAMIC lists are filter-driven.
_WRITABLE_PROCESSING_TYPES = ("MANUAL", "SNAPSHOT")


class ListEndpoints(Portal):
    """The ``list`` and ``memberships`` endpoints."""

    def _handle_list(self, request: Request, fault: Fault | None) -> Response:
        list_id = request.params["list_id"]
        with self._lock:
            lst = self._lists.get(list_id)
            if lst is None:
                return Response(404, self.error_body(404, f"List {list_id} does not exist."))
            size = len(lst["members"]) if lst["size"] is None else lst["size"]
            status = lst["processingStatus"]
            body = {k: lst[k] for k in ("name", "processingType", "objectTypeId", "listVersion")}
            created, updated = lst["createdAt"], lst["updatedAt"]
        if fault is not None and fault.kind is FaultKind.LIST_SIZE:
            size = size + 1 if fault.list_size is None else fault.list_size
        if fault is not None and fault.kind is FaultKind.PROCESSING_STATUS:
            status = fault.processing_status
        body.update(
            listId=list_id,
            processingStatus=status,
            size=size,
            createdAt=created,
            updatedAt=updated,
            filtersUpdatedAt=created,
            createdById="1",
            updatedById="1",
            # Real responses also carry the size here, as a string.
            additionalProperties={"hs_list_size": str(size), "hs_last_record_added_at": updated},
        )
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

    def _handle_memberships_add(self, request: Request, fault: Fault | None) -> Response:
        """``PUT /crm/v3/lists/{listId}/memberships/add``: records that do not exist or are
        already members are ignored (reported as missing / not added), as HubSpot does."""
        list_id = request.params["list_id"]
        try:
            record_ids = request.json
        except ValueError as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(record_ids, list) or not all(isinstance(i, str) for i in record_ids):
            raise _BadRequest("Invalid input JSON: expected an array of record id strings")
        with self._lock:
            lst = self._lists.get(list_id)
            if lst is None:
                return Response(404, self.error_body(404, f"List {list_id} does not exist."))
            if lst["processingType"] not in _WRITABLE_PROCESSING_TYPES:
                raise _BadRequest(
                    f"List {list_id} is {lst['processingType']}; only MANUAL or SNAPSHOT "
                    "lists accept membership changes"
                )
            records = (
                self._contacts if lst["objectTypeId"] == CONTACT_OBJECT_TYPE_ID else self._companies
            )
            added, missing = [], []
            for record_id in dict.fromkeys(record_ids):
                if record_id not in records:
                    missing.append(record_id)
                elif record_id not in lst["members"]:
                    added.append(record_id)
            if added:
                self._members_version += 1
                now = iso_now()
                lst["members"].update(dict.fromkeys(added, now))
                lst["updatedAt"] = now
        return Response(
            200, {"recordIdsMissing": missing, "recordIdsRemoved": [], "recordsIdsAdded": added}
        )
