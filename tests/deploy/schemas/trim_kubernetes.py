"""Write kubernetes-v1.33.0-strict.json: the Deployment, Service and Job schemas of
kubernetes-validate's ``v1.33.0-local-strict`` set with only the definitions they reach, and
no descriptions.

Run once, by hand, when the vendored version changes (README.md in this folder):
``python tests/deploy/schemas/trim_kubernetes.py PATH/TO/v1.33.0-local-strict``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KINDS = {
    "Deployment": "deployment-apps-v1.json",
    "Service": "service-v1.json",
    "Job": "job-batch-v1.json",
}
PREFIX = "/api/_definitions.json#/$defs/"  # in a kind's file
LOCAL = "#/$defs/"  # inside _definitions.json


def _refs(node: object) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            found.add(ref.removeprefix(PREFIX).removeprefix(LOCAL))
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found


def _bare(node: object, *, in_properties: bool = False) -> object:
    """``node`` without its prose: descriptions validate nothing (a property that happens to
    be called ``description`` is kept)."""
    if isinstance(node, dict):
        return {
            key: _bare(value, in_properties=key == "properties" and not in_properties)
            for key, value in node.items()
            if in_properties or not (key == "description" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_bare(value) for value in node]
    return node


def _local(node: object) -> object:
    text = json.dumps(_bare(node)).replace(f'"{PREFIX}', f'"{LOCAL}')
    return json.loads(text)


def main(source: Path, target: Path) -> None:
    definitions = json.loads((source / "_definitions.json").read_text())["$defs"]
    kinds = {kind: json.loads((source / name).read_text()) for kind, name in KINDS.items()}
    wanted: set[str] = set()
    pending = set().union(*(_refs(schema) for schema in kinds.values()))
    while pending:
        name = pending.pop()
        if name not in wanted:
            wanted.add(name)
            pending |= _refs(definitions[name]) - wanted
    trimmed = {
        "$comment": "kubernetes-validate 1.37.0, v1.33.0-local-strict, trimmed and"
        " without descriptions by trim_kubernetes.py",
        "kinds": {kind: _local(schema) for kind, schema in kinds.items()},
        "$defs": {name: _local(definitions[name]) for name in sorted(wanted)},
    }
    target.write_text(json.dumps(trimmed, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).with_name("kubernetes-v1.33.0-strict.json"))
