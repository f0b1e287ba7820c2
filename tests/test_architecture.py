"""The shape of the package (docs/architecture.md), checked on its import graph.

Module-level imports only: a lazy import inside a function (the CLI loading the dev tools, the
charts loading matplotlib) is how a layer is allowed to reach further without the rest paying
for it at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "morpheus_pipelines"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """Modules imported at module level (``from x import y`` counts ``x.y`` when it is a
    module, else ``x``)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def _in(layer: str, module: str) -> bool:
    return module == f"{PACKAGE}.{layer}" or module.startswith(f"{PACKAGE}.{layer}.")


def test_the_import_graph_has_no_cycle() -> None:
    internal = {m: {t for t in ts if t in MODULES} for m, ts in GRAPH.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(internal[module]):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(internal):
        if module not in state:
            visit(module, [module])
    assert not cycles, cycles


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        # assets are thin: no SQL, no ORM models, no repository; they call services
        ("assets", ("models", "repositories", "devtools")),
        # business rules are plain Python
        ("rules", ("assets", "resources", "services", "repositories", "models", "clients", "db")),
        # reports render figures; they read no database and call no service
        ("reports", ("assets", "resources", "repositories", "models", "clients", "db")),
        # nothing in the runtime imports the development tooling
        ("services", ("devtools", "assets", "resources")),
        ("repositories", ("devtools", "assets", "resources", "services")),
        ("resources", ("devtools", "assets")),
        ("sensors", ("devtools",)),
        ("db", ("devtools", "assets", "services")),
        ("clients", ("devtools", "assets", "repositories")),
        ("observability", ("devtools", "assets", "services", "repositories")),
        # the CRM data layer stands alone: ownership and lead intake build on it
        ("crm", ("devtools", "assets", "resources", "services", "reports", "sensors")),
        # the intake service is its own process: no Dagster definitions, no dev tools
        ("intake", ("devtools", "assets", "resources", "services", "sensors", "reports")),
    ],
)
def test_layers_import_only_what_they_may(layer: str, forbidden: tuple[str, ...]) -> None:
    offending = sorted(
        (module, target)
        for module, targets in GRAPH.items()
        if _in(layer, module)
        for target in targets
        if any(_in(other, target) for other in forbidden)
    )
    assert not offending, offending


def test_rules_and_reports_do_not_import_dagster() -> None:
    offending = sorted(
        module
        for module, targets in GRAPH.items()
        if (_in("rules", module) or _in("reports", module))
        and any(t == "dagster" or t.startswith("dagster.") for t in targets)
    )
    assert not offending, offending


def test_only_the_cli_reaches_the_dev_tools() -> None:
    runtime = [m for m in GRAPH if not _in("devtools", m) and m != f"{PACKAGE}.cli"]
    offending = sorted(
        (m, t) for m in runtime for t in GRAPH[m] if _in("devtools", t) or t == f"{PACKAGE}.cli"
    )
    assert not offending, offending
