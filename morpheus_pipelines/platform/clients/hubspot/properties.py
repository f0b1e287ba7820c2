"""Properties: the unique key properties Morpheus's upserts are keyed by, created once per
portal (``POST /crm/v3/properties/{objectType}`` with ``hasUniqueValue``)."""

from __future__ import annotations

from typing import Any

from morpheus_pipelines.platform.clients.hubspot.transport import HubSpotError, HubSpotTransport

LEAD_KEY_PROPERTY = "morpheus_lead_key"
INTENT_KEY_PROPERTY = "morpheus_intent_key"
# (object type, property, label, property group): the groups are the objects' default ones.
UNIQUE_KEY_PROPERTIES = (
    ("contacts", LEAD_KEY_PROPERTY, "Morpheus lead key", "contactinformation"),
    ("tasks", INTENT_KEY_PROPERTY, "Morpheus intent key", "taskinformation"),
    ("calls", INTENT_KEY_PROPERTY, "Morpheus intent key", "callinformation"),
)


class PropertyEndpoints(HubSpotTransport):
    """The property endpoints."""

    def ensure_unique_property(
        self, object_type: str, name: str, *, label: str, group_name: str
    ) -> bool:
        """Create the text property ``name`` of ``object_type`` with unique values; True when
        it was created, False when it existed already (HubSpot answers 409). An existing
        property without unique values is an error: no upsert could be keyed by it."""
        endpoint = "properties_create"
        payload = {
            "name": name,
            "label": label,
            "type": "string",
            "fieldType": "text",
            "groupName": group_name,
            "hasUniqueValue": True,
        }
        try:
            self.request(
                "POST", f"/crm/v3/properties/{object_type}", endpoint=endpoint, json=payload
            )
        except HubSpotError as exc:
            if exc.status != 409:
                raise
        else:
            return True
        existing = self._property(object_type, name)
        if not existing.get("hasUniqueValue"):
            raise HubSpotError(
                f"HubSpot {object_type} property {name!r} exists without unique values; "
                "Morpheus cannot key its writes by it (recreate it with unique values)",
                endpoint=endpoint,
            )
        return False

    def ensure_unique_key_properties(self) -> dict[str, bool]:
        """Every property of :data:`UNIQUE_KEY_PROPERTIES`; ``"type.name"`` -> created now."""
        return {
            f"{object_type}.{name}": self.ensure_unique_property(
                object_type, name, label=label, group_name=group
            )
            for object_type, name, label, group in UNIQUE_KEY_PROPERTIES
        }

    def _property(self, object_type: str, name: str) -> dict[str, Any]:
        _, body = self.request(
            "GET", f"/crm/v3/properties/{object_type}/{name}", endpoint="property_read"
        )
        if not isinstance(body, dict):
            raise HubSpotError("property response is not an object", endpoint="property_read")
        return body
