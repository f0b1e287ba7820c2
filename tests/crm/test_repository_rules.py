"""The data layer's own rules (docs/data-layer.md), enforced by reading the code of every CRM
repository: a repository never owns a transaction or swallows a database error, takes the
caller's session first and positionally, and names real camelCase columns in its conflict and
update column lists."""

from __future__ import annotations

import ast
import pkgutil
import re
from pathlib import Path

import pytest

from morpheus_pipelines.crm import models
from morpheus_pipelines.platform.store.model_base import Base

REPOSITORIES = Path(models.__file__).parent.parent / "repositories"
SOURCES = sorted(p for p in REPOSITORIES.rglob("*.py") if p.name != "__init__.py")
# Where upserts are called with column lists: the repositories and the code that calls them.
CALLERS = sorted((REPOSITORIES.parent).rglob("*.py"))
# What owning a transaction or a session looks like in SQLAlchemy.
FORBIDDEN_CALLS = {"commit", "rollback", "begin", "begin_nested", "close", "get_session"}
FORBIDDEN_CONSTRUCTORS = {"Session", "sessionmaker", "create_engine"}
CAMEL_CASE = re.compile(r"^[a-z]+(?:[A-Z][a-z0-9]*)*$")
CRM_COLUMNS = {
    column.name
    for table in Base.metadata.tables.values()
    if table.name
    in {
        "subscriptions",
        "sellers",
        "contacts",
        "activities",
        "calls",
        "campaign_targets",
        "sales_reps",
        "configs",
        "follow_up_tasks",
        "emails",
        "email_variations",
        "email_campaign_targets",
        "target_emails",
        "target_phone_numbers",
    }
    for column in table.columns
}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _public_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    """Public methods of the module's classes and its public functions."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found += [
                f
                for f in node.body
                if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")
            ]
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            found.append(node)
    return found


def test_every_repository_module_is_read() -> None:
    """The files read are every module Python finds in the package, subpackages included:
    a module the glob missed would escape every rule below."""
    package = "morpheus_pipelines.crm.repositories"
    found = {
        module.name.removeprefix(f"{package}.")
        for module in pkgutil.walk_packages([str(REPOSITORIES)], prefix=f"{package}.")
        if not module.ispkg
    }
    read = {".".join(path.relative_to(REPOSITORIES).with_suffix("").parts) for path in SOURCES}
    assert read == found
    assert "leads" in read and "timeline" in read  # the package itself, not an empty folder


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_repository_owns_a_transaction_or_a_session(path: Path) -> None:
    offending = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call):
            name = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", None)
            )
            if name in FORBIDDEN_CALLS or name in FORBIDDEN_CONSTRUCTORS:
                offending.append(f"line {node.lineno}: {name}()")
    assert not offending, offending


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_repository_swallows_a_database_error(path: Path) -> None:
    """Every ``except`` re-raises: the caller's ``get_session`` block must see the error and
    roll back."""
    offending = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ExceptHandler):
            raises = any(isinstance(child, ast.Raise) for child in ast.walk(node))
            if not raises:
                offending.append(f"line {node.lineno}")
    assert not offending, offending


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_session_comes_first_and_positional(path: Path) -> None:
    offending = []
    for function in _public_functions(_tree(path)):
        positional = [a.arg for a in function.args.posonlyargs + function.args.args]
        if positional and positional[0] in {"self", "cls"}:
            positional = positional[1:]
        names = {*positional, *(a.arg for a in function.args.kwonlyargs)}
        in_class = function.col_offset > 0
        if not in_class and "session" not in names:
            continue  # a pure helper (``dialer_rr_config_key``): no database, no session
        if not positional or positional[0] != "session":
            offending.append(f"{function.name}: first parameter is not session")
        if "session" in {a.arg for a in function.args.kwonlyargs}:
            offending.append(f"{function.name}: session is keyword-only")
    assert not offending, offending


def _module_lists(tree: ast.Module) -> dict[str, ast.List | ast.Tuple]:
    """The module's constants that are literal lists or tuples (``CONFLICT_COLUMNS = [...]``)."""
    found = {}
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if isinstance(value, ast.List | ast.Tuple):
            for target in targets:
                if isinstance(target, ast.Name):
                    found[target.id] = value
    return found


def _column_lists(path: Path) -> list[tuple[int, list[str]]]:
    """Every ``conflict_columns=``/``update_columns=`` list of the module, literal or a module
    constant (also inside ``list(...)``), with its line: what production passes."""
    tree = _tree(path)
    constants = _module_lists(tree)
    found = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.keyword) and node.arg in {"conflict_columns", "update_columns"}
        ):
            continue
        value = node.value
        if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "list":
            value = value.args[0] if value.args else value
        if isinstance(value, ast.Name):
            value = constants.get(value.id, value)
        if isinstance(value, ast.List | ast.Tuple):
            names = [
                e.value
                for e in value.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            found.append((node.lineno, names))
    return found


@pytest.mark.parametrize("path", CALLERS, ids=lambda p: str(p.relative_to(REPOSITORIES.parent)))
def test_conflict_and_update_columns_are_real_camel_case_columns(path: Path) -> None:
    offending = []
    for line, names in _column_lists(path):
        for name in names:
            if name != "metadata" and not CAMEL_CASE.match(name):
                offending.append(f"line {line}: {name!r} is not camelCase")
            if name not in CRM_COLUMNS:
                offending.append(f"line {line}: no CRM column {name!r}")
    assert not offending, offending


def test_the_column_lists_production_passes_are_all_read() -> None:
    """The lists that live in steps and in module constants are read, not only the literals
    of the repositories."""
    read = {
        str(path.relative_to(REPOSITORIES.parent)): [names for _, names in _column_lists(path)]
        for path in CALLERS
    }
    assert ["subscriptionId", "externalId"] in read["steps/engagement_sync.py"]
    assert any("hubspotEngagementId" in names for names in read["steps/engagement_sync.py"])
    assert ["subscriptionId", "externalId"] in read["steps/reengagement/batch.py"]
    assert ["providerCallId"] in read["repositories/call.py"]
