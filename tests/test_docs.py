"""The documentation against the code it describes.

* The definitions table of ``docs/architecture.md`` is parsed and compared with the reviewed
  definitions snapshot (``tests/snapshots/definitions.json``), so an asset, check, job,
  schedule or sensor cannot be added, renamed or removed in one and not the other. To rewrite
  the table from the snapshot: ``uv run python tests/test_docs.py``.
* The documents name no document outside the repository: each says what the rule is.
* Every link between documents, and every path of the repository a document names, exists.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = ROOT / "tests" / "snapshots" / "definitions.json"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- definitions: generated from tests/snapshots/definitions.json -->"
END = "<!-- /definitions -->"

Rows = dict[str, dict[str, tuple[str, ...]]]

# --- the definitions table ------------------------------------------------------------------

# Each table of the generated block: its name in the snapshot, its header, and how a
# snapshot entry becomes the row's cells (after the name). A cell is a tuple of items.
HEADERS: dict[str, tuple[str, ...]] = {
    "assets": ("asset", "group", "partitions", "upstream", "checks", "tables written"),
    "jobs": ("job", "assets", "checks"),
    "schedules": ("schedule", "job", "cron", "timezone", "starts"),
    "sensors": ("sensor", "minimum interval", "starts"),
}
TITLES = {"assets": "Assets", "jobs": "Jobs", "schedules": "Schedules", "sensors": "Sensors"}
PARTITIONS = re.compile(
    r"(?P<kind>Daily|Weekly)PartitionsDefinition\((?P<start>[^,]*), (?P<tz>.*)\)"
)
CHECK_KEY = re.compile(
    r"AssetCheckKey\(asset_key=AssetKey\(\['(?P<asset>[^']+)'\]\), name='(?P<name>[^']+)'\)"
)


def _partitions(value: str | None) -> tuple[str, ...]:
    if value is None:
        return ()
    match = PARTITIONS.fullmatch(value)
    if match is None:
        return (value,)
    kind = match["kind"].lower()
    return (f"{kind} from {match['start']} ({match['tz']})",)


def _check(key: str) -> str:
    match = CHECK_KEY.fullmatch(key)
    return f"{match['asset']}.{match['name']}" if match else key


def _job_checks(snapshot: dict[str, Any], job: dict[str, Any]) -> tuple[str, ...]:
    """A job's checks: named, unless they are exactly its assets' checks (then counted)."""
    checks = sorted(_check(key) for key in job["checks"])
    own = sorted(
        f"{asset}.{check}"
        for asset in job["assets"]
        for check in snapshot["assets"][asset]["checks"]
    )
    if job["assets"] and checks and checks == own:
        return (f"its assets' checks ({len(checks)})",)
    return tuple(checks)


def _split(text: str | None) -> tuple[str, ...]:
    if not text or text == "None":
        return ()
    return tuple(sorted(item.strip() for item in text.split(",") if item.strip()))


def expected_rows(snapshot: dict[str, Any]) -> dict[str, Rows]:
    """What the table must say, table by table and row by row, from a definitions snapshot."""
    return {
        "assets": {
            name: {
                "group": (asset["group"],),
                "partitions": _partitions(asset["partitions"]),
                "upstream": tuple(sorted(asset["deps"])),
                "checks": tuple(sorted(asset["checks"])),
                "tables written": _split(asset["tables_written"]),
            }
            for name, asset in snapshot["assets"].items()
        },
        "jobs": {
            name: {
                "assets": tuple(sorted(job["assets"])),
                "checks": _job_checks(snapshot, job),
            }
            for name, job in snapshot["jobs"].items()
        },
        "schedules": {
            name: {
                "job": (schedule["job"],),
                "cron": (schedule["cron"],),
                "timezone": (schedule["timezone"],),
                "starts": (schedule["default_status"].lower(),),
            }
            for name, schedule in snapshot["schedules"].items()
        },
        "sensors": {
            name: {
                "minimum interval": (f"{sensor['interval']} s",),
                "starts": (sensor["default_status"].lower(),),
            }
            for name, sensor in snapshot["sensors"].items()
        },
    }


# Columns whose items are names in the code (shown as code); the others are words.
WORDS = {"group", "partitions", "minimum interval", "starts"}


def _cell(column: str, items: tuple[str, ...]) -> str:
    if not items:
        return "—"
    if column in WORDS or items[0].startswith("its assets'"):
        return ", ".join(items)
    return ", ".join(f"`{item}`" for item in items)


def render(snapshot: dict[str, Any]) -> str:
    """The generated block of docs/architecture.md, markers included."""
    parts = [BEGIN]
    for table, rows in expected_rows(snapshot).items():
        header = HEADERS[table]
        parts += ["", f"**{TITLES[table]}**", ""]
        parts.append("| " + " | ".join(header) + " |")
        parts.append("|" + "---|" * len(header))
        for name in sorted(rows):
            cells = [f"`{name}`"] + [_cell(column, rows[name][column]) for column in header[1:]]
            parts.append("| " + " | ".join(cells) + " |")
    parts += ["", END]
    return "\n".join(parts)


def _block(markdown: str) -> str:
    start, end = markdown.find(BEGIN), markdown.find(END)
    assert start != -1 and end > start, f"docs/architecture.md has no {BEGIN} … {END} block"
    return markdown[start : end + len(END)]


def _items(cell: str) -> tuple[str, ...]:
    cell = cell.strip()
    if cell in ("", "—", "-"):
        return ()
    return tuple(sorted(item.strip().strip("`").strip() for item in cell.split(",")))


def documented_rows(markdown: str) -> dict[str, Rows]:
    """The definitions table as docs/architecture.md has it, in the form of expected_rows."""
    tables = {header: table for table, header in HEADERS.items()}
    found: dict[str, Rows] = {}
    current: str | None = None
    for line in _block(markdown).splitlines():
        line = line.strip()
        if not line.startswith("|"):
            current = None
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if current is None:
            header = tuple(cells)
            assert header in tables, f"a table in the definitions block with header {header}"
            current = tables[header]
            found.setdefault(current, {})
            continue
        if set("".join(cells)) <= set("-: "):
            continue  # the separator line
        header = HEADERS[current]
        assert len(cells) == len(header), f"{current} row with {len(cells)} cells: {line}"
        name = cells[0].strip("`")
        assert name not in found[current], f"{name} twice in the {current} table"
        found[current][name] = {
            column: _items(cell) for column, cell in zip(header[1:], cells[1:], strict=True)
        }
    return found


def drift(markdown: str, snapshot: dict[str, Any]) -> list[str]:
    """Every difference between the documented table and the snapshot, in words."""
    documented, expected = documented_rows(markdown), expected_rows(snapshot)
    differences = []
    for table, rows in expected.items():
        shown = documented.get(table, {})
        for name in sorted(rows.keys() - shown.keys()):
            differences.append(f"{table}: {name} is in the snapshot but not in the document")
        for name in sorted(shown.keys() - rows.keys()):
            differences.append(f"{table}: {name} is in the document but not in the snapshot")
        for name in sorted(rows.keys() & shown.keys()):
            for column, value in rows[name].items():
                if shown[name].get(column) != value:
                    differences.append(
                        f"{table}: {name} {column}: the document says "
                        f"{shown[name].get(column)}, the snapshot {value}"
                    )
    return differences


def _snapshot() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_the_definitions_table_matches_the_snapshot() -> None:
    assert drift(ARCHITECTURE.read_text(encoding="utf-8"), _snapshot()) == [], (
        "docs/architecture.md and tests/snapshots/definitions.json differ; "
        "regenerate the table with `uv run python tests/test_docs.py`"
    )


def _with_new_asset(snapshot: dict[str, Any]) -> None:
    snapshot["assets"]["lead_forecast"] = dict(snapshot["assets"]["lead_scores"])


def _with_new_check(snapshot: dict[str, Any]) -> None:
    snapshot["assets"]["tenant_scores"]["checks"].append("scores_in_range")


def _without_a_sensor(snapshot: dict[str, Any]) -> None:
    del snapshot["sensors"]["new_leads"]


def _with_a_moved_schedule(snapshot: dict[str, Any]) -> None:
    snapshot["schedules"]["apac_daily_job_schedule"]["cron"] = "0 7 * * *"


def _with_a_job_losing_an_asset(snapshot: dict[str, Any]) -> None:
    snapshot["jobs"]["apac_daily_job"]["assets"].remove("daily_summary")


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (_with_new_asset, "lead_forecast"),
        (_with_new_check, "scores_in_range"),
        (_without_a_sensor, "new_leads"),
        (_with_a_moved_schedule, "0 7 * * *"),
        (_with_a_job_losing_an_asset, "apac_daily_job"),
    ],
    ids=lambda value: getattr(value, "__name__", str(value)),
)
def test_the_comparison_catches_a_snapshot_the_document_does_not_show(
    change: Any, named: str
) -> None:
    snapshot = copy.deepcopy(_snapshot())
    change(snapshot)
    differences = drift(ARCHITECTURE.read_text(encoding="utf-8"), snapshot)
    assert differences and any(named in difference for difference in differences), differences


def test_the_rendered_table_reads_back_as_the_snapshot() -> None:
    snapshot = _snapshot()
    assert documented_rows(render(snapshot)) == expected_rows(snapshot)


# --- no document outside the repository -----------------------------------------------------

DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

# Ways the documents once pointed outside the repository: numbered seed documents and their
# sections, a design document, a sibling folder, a task card, an issue tracker.
OUTSIDE_REFERENCES = {
    "a seed document": re.compile(r"\bseed\s+0\d\d\b|\bthe seed\b", re.IGNORECASE),
    "a numbered document's section": re.compile(r"\b0\d\d\s*§|§"),
    # Not the thousands of a figure ("1,006 leads/s").
    "a numbered document": re.compile(r"(?<![\w./-])(?<!\d,)00[1-9](?![\w/])(?!\.\w)"),
    "the design document": re.compile(r"\bDESIGN\b"),
    "a folder beside the repository": re.compile(r"\.\./shared|\.\./\.\./"),
    "a task card": re.compile(r"\bthe card\b", re.IGNORECASE),
    "an issue": re.compile(r"\bissue #\d+|\bthe (\w+ )?issue\b(?!s)", re.IGNORECASE),
    "a rollout plan's step": re.compile(r"\brollout step\b", re.IGNORECASE),
}


def outside_references(text: str) -> list[tuple[int, str, str]]:
    """(line number, what, the line) for every reference to a document outside the repo."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for what, pattern in OUTSIDE_REFERENCES.items():
            if pattern.search(line):
                found.append((number, what, line.strip()))
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_document_points_outside_the_repository(document: Path) -> None:
    assert outside_references(document.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "line",
    [
        "The warehouse is reached only through repositories (seed 001).",
        "in the order of 002 §6",
        "as DESIGN §2 fixes them",
        "owns (002 keeps scores on the tenant rows)",
        # assembled, so this file itself names no folder outside the repository
        "see " + "/".join(["..", "shared", "conventions.md"]),
        "as the card says",
        "Issue #16 asks for it",
        "until that sync runs (the timeline issue)",
    ],
)
def test_the_search_catches_each_kind_of_outside_reference(line: str) -> None:
    assert outside_references(line) != []


@pytest.mark.parametrize(
    "line",
    [
        "migration `0005`, `0010_rule_inputs_uncompressed`, [0001](decisions/0001-x.md)",
        "Please do not open a public issue.",
        "starting 2026-01-01 at 00:00 CST; 0.005 s; +61 2 9999 0000",
        "| leads/s at 16 connections | 1,060 | 1,006 |",
    ],
)
def test_the_search_leaves_the_repository_s_own_numbers_alone(line: str) -> None:
    assert outside_references(line) == []


# --- links and paths ------------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PACKAGE_LAYERS = "platform|db|tenants|crm|assets|resources|sensors|cli|devtools|migrations"
REPOSITORY_PATH = re.compile(
    rf"`((?:morpheus_pipelines/|tests/|benchmarks/|docs/|(?:{PACKAGE_LAYERS})/)[\w./-]*)`"
)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_and_path_a_document_names_exists(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    missing = [
        target
        for target in LINK.findall(text)
        if "://" not in target and not (document.parent / target).exists()
    ]
    for path in REPOSITORY_PATH.findall(text):
        candidates = [ROOT / path, ROOT / "morpheus_pipelines" / path]
        if not any(candidate.exists() for candidate in candidates):
            missing.append(path)
    assert missing == []


if __name__ == "__main__":
    # Rewrite the generated block of docs/architecture.md from the snapshot.
    markdown = ARCHITECTURE.read_text(encoding="utf-8")
    ARCHITECTURE.write_text(markdown.replace(_block(markdown), render(_snapshot())), "utf-8")
