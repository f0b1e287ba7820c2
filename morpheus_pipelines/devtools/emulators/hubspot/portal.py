"""The emulated HubSpot portal's data: lists with their members, companies, contacts, owners,
engagements (calls, tasks, ...), custom properties and the associations between records.

:class:`Portal` holds the state (normalised from the data format in the package docstring) and
the methods tests use to read and change it between requests; the endpoint mixins read it
under ``_lock``.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .._messages import Response, iso_now
from .._rate_limit import RollingWindowLimiter
from .params import _sort_key

COMPANY_OBJECT_TYPE_ID = "0-2"
CONTACT_OBJECT_TYPE_ID = "0-1"
# HubSpot's object type ids, which its error messages and lists name objects by.
OBJECT_TYPE_IDS = {
    "contacts": CONTACT_OBJECT_TYPE_ID,
    "companies": COMPANY_OBJECT_TYPE_ID,
    "deals": "0-3",
    "tasks": "0-27",
    "notes": "0-46",
    "meetings": "0-47",
    "calls": "0-48",
    "emails": "0-49",
}
# The unique properties Morpheus keys its writes by (created through the properties API).
MORPHEUS_PROPERTIES = {
    "contacts": ("morpheus_lead_key", "Morpheus lead key", "contactinformation"),
    "tasks": ("morpheus_intent_key", "Morpheus intent key", "taskinformation"),
    "calls": ("morpheus_intent_key", "Morpheus intent key", "callinformation"),
}

_UNSET: Any = object()


def hubspot_stamp(moment: datetime | None = None) -> str:
    """``moment`` (now by default) as HubSpot writes a timestamp."""
    if moment is None:
        return iso_now()
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


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


def normalize_property(raw: Mapping[str, Any], now: str) -> dict[str, Any]:
    """A property definition in the shape HubSpot's properties API answers with."""
    return {
        "name": str(raw["name"]),
        "label": str(raw.get("label") or raw["name"]),
        "type": str(raw.get("type") or "string"),
        "fieldType": str(raw.get("fieldType") or "text"),
        "groupName": str(raw.get("groupName") or ""),
        "description": str(raw.get("description") or ""),
        "options": [dict(o) for o in raw.get("options") or ()],
        "displayOrder": int(raw.get("displayOrder", -1)),
        "hasUniqueValue": bool(raw.get("hasUniqueValue", False)),
        "hidden": bool(raw.get("hidden", False)),
        "formField": bool(raw.get("formField", False)),
        "calculated": False,
        "externalOptions": False,
        "hubspotDefined": False,
        "archived": False,
        "createdAt": str(raw.get("createdAt") or now),
        "updatedAt": str(raw.get("updatedAt") or raw.get("createdAt") or now),
        "modificationMetadata": {
            "archivable": True,
            "readOnlyDefinition": False,
            "readOnlyValue": False,
        },
    }


def morpheus_property_data() -> dict[str, list[dict[str, Any]]]:
    """The data-file ``properties`` entry holding Morpheus's unique key properties."""
    return {
        object_type: [
            {
                "name": name,
                "label": label,
                "type": "string",
                "fieldType": "text",
                "groupName": group,
                "hasUniqueValue": True,
            }
        ]
        for object_type, (name, label, group) in MORPHEUS_PROPERTIES.items()
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


def batch_error(category: str, message: str, ids: Iterable[str]) -> dict[str, Any]:
    """One entry of a batch answer's ``errors`` (StandardError), naming the inputs in
    ``context.ids``."""
    return {
        "status": "error",
        "category": category,
        "message": message,
        "context": {"ids": list(ids)},
        "errors": [],
        "links": {},
    }


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
        batch_error(
            "OBJECT_NOT_FOUND",
            f"Could not get some {object_name} objects, they may be deleted or not exist. "
            "Check that ids are valid.",
            missing,
        )
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
    # Calls, emails, meetings, notes and tasks by type, then id.
    _engagements: dict[str, dict[str, dict[str, Any]]]
    _deals: dict[str, dict[str, Any]]
    # Custom properties by object type, then name (HubSpot's own ones are not modelled).
    _properties: dict[str, dict[str, dict[str, Any]]]
    # (from type, to type) -> from id -> to ids; every association is stored both ways.
    _associations: dict[tuple[str, str], dict[str, set[str]]]
    _next_object_id: int

    def load(self, data: Mapping[str, Any]) -> None:
        """Replace lists, companies, contacts, owners and custom properties with those in
        ``data``."""
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
            self._properties = {
                str(object_type): {str(p["name"]): normalize_property(p, now) for p in found}
                for object_type, found in (data.get("properties") or {}).items()
            }

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
                "properties": {
                    object_type: list(copy.deepcopy(found).values())
                    for object_type, found in self._properties.items()
                },
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

    def contacts(self) -> dict[str, dict[str, Any]]:
        """Copies of every stored contact, by id."""
        with self._lock:
            return copy.deepcopy(self._contacts)

    def contact_by_email(self, email: str) -> dict[str, Any] | None:
        """A copy of the contact with ``email`` (compared case-insensitively, as HubSpot
        does) with its ``id`` added, or None."""
        wanted = email.strip().lower()
        with self._lock:
            for contact_id, contact in self._contacts.items():
                if (contact["properties"].get("email") or "").lower() == wanted:
                    return copy.deepcopy(contact) | {"id": contact_id}
        return None

    def tasks(self) -> dict[str, dict[str, Any]]:
        """Copies of every stored task (``properties``, ``createdAt``, ``writes``), by id."""
        return self._engagement_copies("tasks")

    def calls(self) -> dict[str, dict[str, Any]]:
        """Copies of every stored call, by id."""
        return self._engagement_copies("calls")

    def _engagement_copies(self, object_type: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._engagements.get(object_type, {}))

    def complete_task(self, task_id: str | int) -> None:
        """Mark a task COMPLETED, as a rep ticking it off in HubSpot does; its
        ``hs_lastmodifieddate`` moves to now (and always forward)."""
        with self._lock:
            task = self._engagements.get("tasks", {}).get(str(task_id))
            if task is None:
                raise KeyError(f"no task {task_id}")
            task["properties"]["hs_task_status"] = "COMPLETED"
            self._touch(task)

    def _touch(self, record: dict[str, Any]) -> str:
        """Move a stored engagement's ``hs_lastmodifieddate`` to now, at least a millisecond
        past its previous value (a search by modification time must see it again)."""
        previous = record["properties"].get("hs_lastmodifieddate")
        moment = datetime.now(UTC)
        if previous:
            earliest = _parse_iso(previous) + timedelta(milliseconds=1)
            moment = max(moment, earliest)
        stamp = hubspot_stamp(moment)
        record["properties"]["hs_lastmodifieddate"] = stamp
        return stamp

    def list_by_name(self, name: str, object_type_id: str = CONTACT_OBJECT_TYPE_ID) -> str | None:
        """The id of the list called ``name`` (in any case, as list names are unique) holding
        ``object_type_id`` records, or None."""
        with self._lock:
            for list_id, lst in self._lists.items():
                if lst["name"].lower() == name.lower() and lst["objectTypeId"] == object_type_id:
                    return list_id
        return None

    def _records_of(self, object_type: str) -> Mapping[str, Mapping[str, Any]]:
        """The stored records of one type (contacts, companies, deals or an engagement type)
        by id, archived contacts left out; read under ``_lock``."""
        if object_type == "contacts":
            return {i: c for i, c in self._contacts.items() if not c["archived"]}
        if object_type == "companies":
            return self._companies
        if object_type == "deals":
            return self._deals
        return self._engagements.get(object_type, {})

    def associations(self, from_type: str, to_type: str) -> dict[str, set[str]]:
        """A copy of the associations from ``from_type`` records to ``to_type`` records:
        from id -> the ids it is associated with (each association is visible both ways)."""
        with self._lock:
            found = self._associations.get((from_type, to_type), {})
            return {from_id: set(to_ids) for from_id, to_ids in found.items() if to_ids}

    def associate(self, from_type: str, from_id: str, to_type: str, to_id: str) -> bool:
        """Associate two records both ways; False when they already were."""
        with self._lock:
            forward = self._associations.setdefault((from_type, to_type), {})
            if to_id in forward.get(from_id, set()):
                return False
            forward.setdefault(from_id, set()).add(to_id)
            self._associations.setdefault((to_type, from_type), {}).setdefault(to_id, set()).add(
                from_id
            )
            return True

    def dissociate_all(self, from_type: str, from_id: str, to_type: str) -> None:
        """Remove every association of one record to ``to_type`` records (both ways)."""
        with self._lock:
            for to_id in self._associations.get((from_type, to_type), {}).pop(from_id, set()):
                self._associations.get((to_type, from_type), {}).get(to_id, set()).discard(from_id)

    def properties(self, object_type: str) -> dict[str, dict[str, Any]]:
        """Copies of the custom property definitions of ``object_type``, by name."""
        with self._lock:
            return copy.deepcopy(self._properties.get(object_type, {}))

    def set_morpheus_properties(self, present: bool = True) -> None:
        """Create (or remove) the unique properties Morpheus keys its writes by:
        ``morpheus_lead_key`` on contacts, ``morpheus_intent_key`` on tasks and calls."""
        now = iso_now()
        with self._lock:
            for object_type, found in morpheus_property_data().items():
                defined = self._properties.setdefault(object_type, {})
                for raw in found:
                    if present:
                        defined.setdefault(raw["name"], normalize_property(raw, now))
                    else:
                        defined.pop(raw["name"], None)

    def unique_properties(self, object_type: str) -> set[str]:
        """The properties an upsert of ``object_type`` may be keyed by: those with unique
        values, and ``email`` for contacts."""
        with self._lock:
            found = {
                name
                for name, definition in self._properties.get(object_type, {}).items()
                if definition["hasUniqueValue"]
            }
        return found | ({"email"} if object_type == "contacts" else set())

    def new_object_id(self, taken: Mapping[str, Any]) -> str:
        """A fresh record id, numeric like HubSpot's, not in ``taken``."""
        with self._lock:
            while str(self._next_object_id) in taken:
                self._next_object_id += 1
            self._next_object_id += 1
            return str(self._next_object_id - 1)
