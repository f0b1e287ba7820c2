"""The Properties API: ``POST /crm/v3/properties/{objectType}``, creating a custom property, and
``GET /crm/v3/properties/{objectType}/{propertyName}``, reading one.

The request needs ``name`` (lower case, digits, underscores), ``label``, ``type``,
``fieldType`` and ``groupName``; ``hasUniqueValue: true`` makes the property one an upsert may
be keyed by. A name already taken answers 409; the answer to a creation is 201 with the
property's definition. HubSpot publishes no OpenAPI file for this API beside the others, so
the shapes follow its developer documentation (see ``tests/emulators/hubspot-openapi``).
"""

from __future__ import annotations

import re

from .._faults import Fault
from .._messages import Request, Response, iso_now
from .params import _BadRequest
from .portal import OBJECT_TYPE_IDS, Portal, normalize_property

_REQUIRED = ("name", "label", "type", "fieldType", "groupName")
_TYPES = ("bool", "date", "datetime", "enumeration", "number", "phone_number", "string")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
# HubSpot's own properties that Morpheus might collide with (the rest are not modelled).
_BUILT_IN = {
    "contacts": {"email", "firstname", "lastname", "phone", "hubspot_owner_id", "createdate"},
    "tasks": {"hs_task_subject", "hs_task_body", "hs_task_status", "hs_timestamp"},
    "calls": {"hs_call_title", "hs_call_body", "hs_call_direction", "hs_timestamp"},
}
_BY_NAME = {name: name for name in OBJECT_TYPE_IDS} | {
    name[:-1]: name for name in OBJECT_TYPE_IDS if name != "companies"
}
_BY_NAME |= {"company": "companies"} | {type_id: name for name, type_id in OBJECT_TYPE_IDS.items()}


def _object_type(request: Request) -> str:
    object_type = _BY_NAME.get(request.params["object_type"].lower())
    if object_type is None:
        raise _BadRequest(f"Unable to infer object type from: {request.params['object_type']}")
    return object_type


class PropertyEndpoints(Portal):
    """The ``properties_create`` and ``property_read`` endpoints."""

    def _handle_property_read(self, request: Request, fault: Fault | None) -> Response:
        object_type, name = _object_type(request), request.params["name"]
        with self._lock:
            found = self._properties.get(object_type, {}).get(name)
            if found is not None:
                return Response(200, dict(found))
        if name in _BUILT_IN.get(object_type, ()):
            now = iso_now()
            return Response(200, normalize_property({"name": name}, now) | {"hubspotDefined": True})
        return Response(
            404, self.error_body(404, f"Property {name} does not exist on {object_type}")
        )

    def _handle_properties_create(self, request: Request, fault: Fault | None) -> Response:
        object_type = _object_type(request)
        try:
            payload = request.json
        except ValueError as exc:
            raise _BadRequest(f"Invalid input JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise _BadRequest("Invalid input JSON: expected an object")
        missing = [k for k in _REQUIRED if not isinstance(payload.get(k), str) or not payload[k]]
        if missing:
            raise _BadRequest(f"Invalid input JSON: missing required fields {missing}")
        name = payload["name"]
        if not _NAME.match(name):
            raise _BadRequest(
                f"Property name {name!r} must start with a lower-case letter and hold only "
                "lower-case letters, digits and underscores"
            )
        if payload["type"] not in _TYPES:
            raise _BadRequest(f"Property type {payload['type']!r} is not one of {list(_TYPES)}")
        if not isinstance(payload.get("hasUniqueValue", False), bool):
            raise _BadRequest("Invalid input JSON: 'hasUniqueValue' must be a boolean")
        with self._lock:
            defined = self._properties.setdefault(object_type, {})
            if name in defined or name in _BUILT_IN.get(object_type, ()):
                return Response(
                    409,
                    self.error_body(
                        409,
                        f"A property named '{name}' already exists.",
                        category="OBJECT_ALREADY_EXISTS",
                    ),
                )
            defined[name] = normalize_property(payload, iso_now())
            return Response(201, dict(defined[name]))
