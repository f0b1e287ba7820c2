"""The emulated HubSpot portal's data: lists with their members, companies and owners.

:class:`Portal` holds the state (normalised from the data format in the package docstring) and
the methods tests use to change it between requests; the endpoint mixins read it under
``_lock``.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._messages import Response, iso_now
from .._rate_limit import RollingWindowLimiter
from .params import _sort_key

COMPANY_OBJECT_TYPE_ID = "0-2"
CONTACT_OBJECT_TYPE_ID = "0-1"

_UNSET: Any = object()


def hubspot_stamp(moment: datetime | None = None) -> str:
    """``moment`` (now by default) as HubSpot writes a timestamp."""
    if moment is None:
        return iso_now()
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _to_hubspot_value(value: Any) -> str | None:
    # HubSpot serves every property value as a string.
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ";".join(str(v) for v in value)  # multi-value properties are ';'-joined
    return str(value)


def _normalize_members(members: Iterable[Any], default_ts: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for member in members:
        if isinstance(member, Mapping):
            record_id = str(member.get("id", member.get("recordId")))
            result[record_id] = str(member.get("membershipTimestamp") or default_ts)
        else:
            result[str(member)] = default_ts
    return result


def _normalize_list(list_id: str, raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    created = str(raw.get("createdAt") or now)
    return {
        "name": str(raw.get("name") or f"List {list_id}"),
        "processingStatus": str(raw.get("processingStatus") or "COMPLETE"),
        "processingType": str(raw.get("processingType") or "MANUAL"),
        "objectTypeId": str(raw.get("objectTypeId") or COMPANY_OBJECT_TYPE_ID),
        "listVersion": int(raw.get("listVersion") or 1),
        "size": None if raw.get("size") is None else int(raw["size"]),
        "createdAt": created,
        "updatedAt": str(raw.get("updatedAt") or created),
        "members": _normalize_members(raw.get("members") or (), created),
    }


def _normalize_company(company_id: str, raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    props = {str(k): _to_hubspot_value(v) for k, v in (raw.get("properties") or {}).items()}
    created = str(raw.get("createdAt") or props.get("createdate") or now)
    updated = str(raw.get("updatedAt") or props.get("hs_lastmodifieddate") or created)
    props["hs_object_id"] = company_id
    props.setdefault("createdate", created)
    props.setdefault("hs_lastmodifieddate", updated)
    return {
        "properties": props,
        "createdAt": created,
        "updatedAt": updated,
        "archived": bool(raw.get("archived", False)),
    }


def _normalize_contact(raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    created = str(raw.get("createdAt") or now)
    props = {str(k): _to_hubspot_value(v) for k, v in (raw.get("properties") or {}).items()}
    updated = str(raw.get("updatedAt") or props.get("lastmodifieddate") or created)
    # A contact's modification time is ``lastmodifieddate`` (what its search filters on).
    props.setdefault("lastmodifieddate", updated)
    return {
        "properties": props,
        "createdAt": created,
        "updatedAt": updated,
        "archived": bool(raw.get("archived", False)),
        # How many batch updates touched the record: tests count writes with it.
        "writes": int(raw.get("writes") or 0),
    }


def _normalize_owner(raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    owner = {
        "id": str(raw["id"]),
        "type": str(raw.get("type") or "PERSON"),
        "archived": bool(raw.get("archived", False)),
        "createdAt": str(raw.get("createdAt") or now),
        "updatedAt": str(raw.get("updatedAt") or raw.get("createdAt") or now),
    }
    for key in ("email", "firstName", "lastName"):
        if raw.get(key) is not None:
            owner[key] = str(raw[key])
    for key in ("userId", "userIdIncludingInactive"):
        if raw.get(key) is not None:
            owner[key] = int(raw[key])
    if raw.get("teams") is not None:
        owner["teams"] = [dict(t) for t in raw["teams"]]
    return owner


def batch_response(
    started: str, results: list[dict[str, Any]], missing: list[str], object_name: str
) -> Response:
    """A batch endpoint's answer: 200 with every result, or 207 naming the ``missing`` ids
    (category OBJECT_NOT_FOUND) beside the results that were found."""
    body: dict[str, Any] = {
        "status": "COMPLETE",
        "results": results,
        "startedAt": started,
        "completedAt": iso_now(),
    }
    if not missing:
        return Response(200, body)
    body["numErrors"] = 1
    body["errors"] = [
        {
            "status": "error",
            "category": "OBJECT_NOT_FOUND",
            "message": (
                f"Could not get some {object_name} objects, they may be deleted or not exist. "
                "Check that ids are valid."
            ),
            "context": {"ids": missing},
            "errors": [],
            "links": {},
        }
    ]
    return Response(207, body)


class Portal:
    """The portal state and its mutators (mixed into :class:`~.emulator.HubSpotEmulator`,
    whose constructor sets these attributes)."""

    _lock: threading.RLock
    _clock: Callable[[], float]
    _token: str | None
    _lists: dict[str, dict[str, Any]]
    _members_version: int
    _sorted_members: dict[str, tuple[int, list[str], list[tuple[int, int, str]]]]
    _companies: dict[str, dict[str, Any]]
    _contacts: dict[str, dict[str, Any]]
    _owners: list[dict[str, Any]]
    _limiter: RollingWindowLimiter | None

    def load(self, data: Mapping[str, Any]) -> None:
        """Replace lists, companies, contacts and owners with those in ``data``."""
        now = iso_now()
        with self._lock:
            self._members_version += 1
            self._lists = {
                str(k): _normalize_list(str(k), v, now)
                for k, v in (data.get("lists") or {}).items()
            }
            self._companies = {
                str(k): _normalize_company(str(k), v, now)
                for k, v in (data.get("companies") or {}).items()
            }
            self._contacts = {
                str(k): _normalize_contact(v, now) for k, v in (data.get("contacts") or {}).items()
            }
            self._owners = [_normalize_owner(o, now) for o in data.get("owners") or ()]

    def to_data(self) -> dict[str, Any]:
        """The current state in the data-file format."""
        with self._lock:
            lists = {}
            for list_id, lst in self._lists.items():
                entry = {k: v for k, v in lst.items() if k != "members"}
                entry["members"] = [
                    {"id": rid, "membershipTimestamp": ts} for rid, ts in lst["members"].items()
                ]
                lists[list_id] = entry
            data: dict[str, Any] = {
                "token": self._token,
                "lists": lists,
                "companies": copy.deepcopy(self._companies),
                "contacts": copy.deepcopy(self._contacts),
                "owners": copy.deepcopy(self._owners),
            }
            if self._limiter is not None:
                data["rate_limit"] = {
                    "max_requests": self._limiter.max_requests,
                    "interval_s": self._limiter.interval_s,
                }
            return data

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_data` as JSON."""
        Path(path).write_text(json.dumps(self.to_data(), indent=2), encoding="utf-8")

    @property
    def token(self) -> str | None:
        """The bearer token required, or None when auth is off."""
        return self._token

    def set_token(self, token: str | None) -> None:
        """Require a different token (None turns auth off)."""
        with self._lock:
            self._token = token

    def set_rate_limit(self, max_requests: int | None, interval_s: float = 10.0) -> None:
        """Enforce ``max_requests`` per rolling ``interval_s`` (None switches it off)."""
        with self._lock:
            self._limiter = (
                None
                if max_requests is None
                else RollingWindowLimiter(max_requests, interval_s, self._clock)
            )

    def set_company(
        self,
        company_id: str | int,
        properties: Mapping[str, Any] | None = None,
        *,
        replace: bool = False,
        archived: bool | None = None,
    ) -> None:
        """Create or update a company; bumps ``updatedAt``/``hs_lastmodifieddate`` to now
        unless ``properties`` sets ``hs_lastmodifieddate``."""
        company_id = str(company_id)
        now = iso_now()
        with self._lock:
            current = self._companies.get(company_id)
            if current is None or replace:
                created = current["createdAt"] if current else now
                raw: dict[str, Any] = {"properties": dict(properties or {}), "createdAt": created}
                raw["updatedAt"] = (properties or {}).get("hs_lastmodifieddate") or now
                raw["archived"] = bool(archived)
                self._companies[company_id] = _normalize_company(company_id, raw, now)
                return
            props = current["properties"]
            props.update({str(k): _to_hubspot_value(v) for k, v in (properties or {}).items()})
            if properties is None or "hs_lastmodifieddate" not in properties:
                props["hs_lastmodifieddate"] = now
            current["updatedAt"] = props["hs_lastmodifieddate"]
            if archived is not None:
                current["archived"] = archived

    def set_companies(
        self, companies: Mapping[str, Mapping[str, Any]], *, replace_all: bool = True
    ) -> None:
        """Set many companies (data-file shape: id -> {"properties": ...}); by default the
        companies not named are deleted."""
        now = iso_now()
        with self._lock:
            if replace_all:
                self._companies = {}
            for company_id, raw in companies.items():
                self._companies[str(company_id)] = _normalize_company(str(company_id), raw, now)

    def remove_company(self, company_id: str | int) -> None:
        """Delete a company (a batch read then reports it missing); list membership stays."""
        with self._lock:
            self._companies.pop(str(company_id), None)

    def clear_property(self, company_id: str | int, name: str) -> None:
        """Clear one property, as a HubSpot user emptying a field would."""
        self.set_company(company_id, {name: None})

    def company(self, company_id: str | int) -> dict[str, Any] | None:
        """A copy of one stored company, or None."""
        with self._lock:
            found = self._companies.get(str(company_id))
            return copy.deepcopy(found)

    def set_list(
        self,
        list_id: str | int,
        *,
        name: str | None = None,
        processing_status: str | None = None,
        processing_type: str | None = None,
        object_type_id: str | None = None,
        size: int | None = _UNSET,
        members: Iterable[Any] | None = None,
    ) -> None:
        """Create or change a list. ``size=None`` reverts to the true member count."""
        list_id = str(list_id)
        now = iso_now()
        with self._lock:
            self._members_version += 1
            lst = self._lists.setdefault(list_id, _normalize_list(list_id, {}, now))
            if name is not None:
                lst["name"] = name
            if processing_status is not None:
                lst["processingStatus"] = processing_status
            if processing_type is not None:
                lst["processingType"] = processing_type
            if object_type_id is not None:
                lst["objectTypeId"] = object_type_id
            if size is not _UNSET:
                lst["size"] = None if size is None else int(size)
            if members is not None:
                lst["members"] = _normalize_members(members, now)
            lst["updatedAt"] = now

    def set_list_members(self, list_id: str | int, members: Iterable[Any]) -> None:
        """Replace a list's members (ids or ``{"id", "membershipTimestamp"}`` dicts)."""
        self.set_list(list_id, members=members)

    def add_list_members(self, list_id: str | int, members: Iterable[Any]) -> None:
        """Add members to a list, keeping existing ones."""
        now = iso_now()
        with self._lock:
            self._members_version += 1
            lst = self._lists.setdefault(str(list_id), _normalize_list(str(list_id), {}, now))
            lst["members"].update(_normalize_members(members, now))
            lst["updatedAt"] = now

    def remove_list_members(self, list_id: str | int, record_ids: Iterable[str | int]) -> None:
        """Remove members from a list."""
        with self._lock:
            self._members_version += 1
            lst = self._lists[str(list_id)]
            for record_id in record_ids:
                lst["members"].pop(str(record_id), None)
            lst["updatedAt"] = iso_now()

    def list_members(self, list_id: str | int) -> list[str]:
        """Member record ids in HubSpot's paging order."""
        with self._lock:
            return sorted(self._lists[str(list_id)]["members"], key=_sort_key)

    def set_contact(
        self,
        contact_id: str | int,
        properties: Mapping[str, Any] | None = None,
        *,
        modified_at: datetime | None = None,
    ) -> None:
        """Create a contact, or merge ``properties`` into an existing one; either way it was
        last modified at ``modified_at`` (now by default)."""
        now = hubspot_stamp(modified_at)
        with self._lock:
            current = self._contacts.get(str(contact_id))
            if current is None:
                self._contacts[str(contact_id)] = _normalize_contact(
                    {"properties": dict(properties or {}), "createdAt": now}, now
                )
                return
            current["properties"].update(
                {str(k): _to_hubspot_value(v) for k, v in (properties or {}).items()}
            )
            current["properties"]["lastmodifieddate"] = now
            current["updatedAt"] = now

    def set_contact_property(
        self, contact_id: str | int, name: str, value: Any, *, modified_at: datetime | None = None
    ) -> None:
        """Change one property of an existing contact, as a person in HubSpot would (what a
        ``contact.propertyChange`` webhook reports); ``lastmodifieddate`` moves to
        ``modified_at`` (now by default)."""
        with self._lock:
            if str(contact_id) not in self._contacts:
                raise KeyError(f"no contact {contact_id}")
            self.set_contact(contact_id, {name: value}, modified_at=modified_at)

    def contact(self, contact_id: str | int) -> dict[str, Any] | None:
        """A copy of one stored contact (``properties``, ``writes``, ...), or None."""
        with self._lock:
            return copy.deepcopy(self._contacts.get(str(contact_id)))

    def set_owners(self, owners: Iterable[Mapping[str, Any]]) -> None:
        """Replace the owners (data-file shape)."""
        now = iso_now()
        with self._lock:
            self._owners = [_normalize_owner(o, now) for o in owners]

    def set_owner_archived(self, owner_id: str | int, archived: bool = True) -> None:
        """Archive (or restore) one owner, as deactivating a HubSpot user does."""
        with self._lock:
            for owner in self._owners:
                if owner["id"] == str(owner_id):
                    owner["archived"] = archived
                    owner["updatedAt"] = iso_now()
                    return
        raise KeyError(f"no owner {owner_id}")
